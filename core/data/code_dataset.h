#pragma once
// CodeSearchNet functions (codesearchnet.h) as masked-LM examples, as CodeBERT pairs them:
// bimodal, [CLS] documentation [SEP] code [SEP] (segments 0 then 1), for a function with a
// docstring; unimodal, [CLS] code [SEP], for code alone. Batched as token_dataset.h's tensors.
#include "core/data/codesearchnet.h"
#include "core/data/token_dataset.h"
#include "core/data/wordpiece_tokenizer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace comera {

// Which examples a function gives: "bimodal" (functions with a docstring only, CodeBERT's
// masked-LM data), "unimodal" (every function, code only) or "both" (bimodal where there is a
// docstring, unimodal otherwise).
enum class CodeExamples { Bimodal, Unimodal, Both };
CodeExamples parse_code_examples(const std::string& name);
const std::vector<std::string>& code_example_names();

// The code as the model reads it: code_tokens joined by spaces where the record has them
// (CodeSearchNet's tokens leave Python's docstring out of the code), else code.
std::string code_text(const CodeFunction& f);
// The documentation likewise: docstring_tokens joined, else docstring.
std::string doc_text(const CodeFunction& f);

class CodeDataset : public TokenDataset {
 public:
  explicit CodeDataset(std::vector<EncodedTokens> examples, int64_t pad_id = 0)
      : TokenDataset(std::move(examples), pad_id, "function") {}
  // Encodes the functions' examples in order (in parallel over the intra-op threads); pairs
  // are cut as BERT's pairs are (pair_dataset.h), single code from its end. Labels are 0.
  static CodeDataset encode(const std::vector<CodeFunction>& functions, CodeExamples which,
                            const WordPieceTokenizer& tokenizer, int64_t max_length);
};

}  // namespace comera
