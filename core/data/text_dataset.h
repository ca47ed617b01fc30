#pragma once
// Single texts with a class label: a JSONL file of {"text": ..., "label": N} rows (the WordNet
// gloss task, wordnet.h, writes them), encoded for BERT as [CLS] text [SEP] with every segment
// id 0 and batched as pair_dataset.h's tensors, so the transformer's classification task reads
// either.
#include "core/data/token_dataset.h"
#include "core/data/wordpiece_tokenizer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace comera {

struct TextExample {
  std::string text;
  int64_t label = 0;
};

// One JSON object per line with "text" (a string) and "label" (an integer >= 0); other keys are
// kept for people, not read; plain or gzip-compressed. Blank lines are skipped; any other
// malformed line is an error naming the file, the line and, for bad JSON, the parser's reason.
std::vector<TextExample> read_text_jsonl(const std::string& path);

// [CLS] text [SEP], the text's tokens cut from the end to fit max_length.
EncodedTokens encode_text(const WordPieceTokenizer& tokenizer, const std::string& text,
                          int64_t label, int64_t max_length = 128);

class TextDataset : public TokenDataset {
 public:
  explicit TextDataset(std::vector<EncodedTokens> texts, int64_t pad_id = 0)
      : TokenDataset(std::move(texts), pad_id, "text") {}
  // Encodes every example (in parallel over the intra-op threads).
  static TextDataset encode(const std::vector<TextExample>& examples,
                            const WordPieceTokenizer& tokenizer, int64_t max_length = 128);
};

}  // namespace comera
