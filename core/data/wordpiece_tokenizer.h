#pragma once
// BERT's uncased tokenizer: the basic tokenizer (clean, split CJK characters, whitespace split,
// lower-case, strip accents, split punctuation) followed by greedy longest-match WordPiece.
// Matches google-research/bert tokenization.py (do_lower_case=True) on the text it covers;
// see core/data/unicode.h for which scripts are lower-cased.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace comera {

// The default vocabulary: $COMERA_VOCAB if set, else data/vocab/bert-base-uncased.txt in
// comera's home (core/util/home_dir.h; scripts/setup.sh writes it into the checkout).
std::string default_vocab_path();
// Throws, naming the fix, unless the vocabulary file at `path` can be opened.
void require_vocab_file(const std::string& path);

// BERT's BasicTokenizer: the words and punctuation marks of `text`, lower-cased, accents removed.
std::vector<std::string> basic_tokenize(const std::string& text);

class WordPieceTokenizer {
 public:
  // `vocab[id]` is the token of that id; continuation pieces start with "##". It must hold
  // [PAD], [UNK], [CLS] and [SEP].
  explicit WordPieceTokenizer(std::vector<std::string> vocab);
  // Reads a BERT vocab.txt (one token per line, line number = id).
  static WordPieceTokenizer from_file(const std::string& path = default_vocab_path());

  // Word pieces of `text`; a word longer than 100 characters or with no split is [UNK].
  std::vector<std::string> tokenize(const std::string& text) const;
  std::vector<int64_t> encode(const std::string& text) const;
  // Tokens joined by spaces with "##" continuations glued on; [PAD] is left out.
  std::string decode(const std::vector<int64_t>& ids) const;

  // Id of a token, or -1 when it is not in the vocabulary.
  int64_t id(const std::string& token) const;
  const std::string& token(int64_t id) const;
  int64_t size() const { return static_cast<int64_t>(vocab_.size()); }

  int64_t pad_id() const { return pad_; }
  int64_t unk_id() const { return unk_; }
  int64_t cls_id() const { return cls_; }
  int64_t sep_id() const { return sep_; }

 private:
  // Appends the WordPiece split of one basic token to `out`.
  void split_word(const std::string& word, std::vector<int64_t>& out) const;

  std::vector<std::string> vocab_;
  std::unordered_map<std::string, int64_t> ids_;
  size_t longest_piece_ = 0;  // bytes; bounds the longest-match search
  int64_t pad_ = 0, unk_ = 0, cls_ = 0, sep_ = 0;
};

}  // namespace comera
