#include "core/data/code_dataset.h"

#include "core/data/pair_dataset.h"
#include "core/data/text_dataset.h"
#include "core/util/error.h"

#include <ATen/Parallel.h>

namespace comera {

namespace {

std::string joined(const std::vector<std::string>& tokens) {
  std::string out;
  for (const auto& t : tokens) out += (out.empty() ? "" : " ") + t;
  return out;
}

bool documented(const CodeFunction& f) {
  return doc_text(f).find_first_not_of(" \t\r\n") != std::string::npos;
}

}  // namespace

const std::vector<std::string>& code_example_names() {
  static const std::vector<std::string> names{"bimodal", "unimodal", "both"};
  return names;
}

CodeExamples parse_code_examples(const std::string& name) {
  if (name == "bimodal") return CodeExamples::Bimodal;
  if (name == "unimodal") return CodeExamples::Unimodal;
  if (name == "both") return CodeExamples::Both;
  throw Error("unknown code examples '" + name + "' (bimodal, unimodal or both)");
}

std::string code_text(const CodeFunction& f) { return f.code_tokens.empty() ? f.code : joined(f.code_tokens); }

std::string doc_text(const CodeFunction& f) {
  return f.docstring_tokens.empty() ? f.docstring : joined(f.docstring_tokens);
}

CodeDataset CodeDataset::encode(const std::vector<CodeFunction>& functions, CodeExamples which,
                                const WordPieceTokenizer& tokenizer, int64_t max_length) {
  std::vector<const CodeFunction*> chosen;
  for (const auto& f : functions)
    if (which != CodeExamples::Bimodal || documented(f)) chosen.push_back(&f);
  std::vector<EncodedTokens> examples(chosen.size());
  at::parallel_for(0, static_cast<int64_t>(chosen.size()), 256, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const auto& f = *chosen[i];
      const bool bimodal = which != CodeExamples::Unimodal && documented(f);
      examples[i] = bimodal ? encode_pair(tokenizer, doc_text(f), code_text(f), 0, max_length)
                            : encode_text(tokenizer, code_text(f), 0, max_length);
    }
  });
  return CodeDataset(std::move(examples), tokenizer.pad_id());
}

}  // namespace comera
