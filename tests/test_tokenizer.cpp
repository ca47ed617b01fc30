// BERT's uncased tokenizer against hand-checked tokenizations and published bert-base-uncased ids.
#include "core/data/wordpiece_tokenizer.h"
#include "core/util/error.h"
#include "tests/support/catch.h"

using namespace comera;
using Catch::Matchers::Contains;
using Strings = std::vector<std::string>;
using Ids = std::vector<int64_t>;

namespace {

const WordPieceTokenizer& bert() {
  static const WordPieceTokenizer tokenizer = WordPieceTokenizer::from_file();
  return tokenizer;
}

}  // namespace

TEST_CASE("basic tokenizer splits, lower-cases and strips accents like BERT", "[tokenizer]") {
  CHECK(basic_tokenize("Héllo, World!") == Strings{"hello", ",", "world", "!"});
  CHECK(basic_tokenize("  Hello\tWORLD\n") == Strings{"hello", "world"});
  CHECK(basic_tokenize("don't") == Strings{"don", "'", "t"});
  CHECK(basic_tokenize("$5.00") == Strings{"$", "5", ".", "00"});
  CHECK(basic_tokenize("a^b") == Strings{"a", "^", "b"});  // ASCII symbols count as punctuation
  CHECK(basic_tokenize("x\u00BFy") == Strings{"x", "\u00BF", "y"});  // ¿ is Po
  CHECK(basic_tokenize("a\u20ACb") == Strings{"a\u20ACb"});          // € is Sc: not split
  CHECK(basic_tokenize("a\u2014b") == Strings{"a", "\u2014", "b"});  // em dash is Pd
  CHECK(basic_tokenize("\u6211\u7231Python") == Strings{"\u6211", "\u7231", "python"});
}

TEST_CASE("accents and case of Latin, Greek, Cyrillic and Hangul fold as in Python", "[tokenizer]") {
  CHECK(basic_tokenize("na\u00EFve caf\u00E9 \u00C5ngstr\u00F6m") ==
        Strings{"naive", "cafe", "angstrom"});
  CHECK(basic_tokenize("\u0141\u00F3d\u017A") == Strings{"\u0142odz"});  // Łódź: Ł has no NFD
  CHECK(basic_tokenize("Stra\u00DFe \u00C6ON") == Strings{"stra\u00DFe", "\u00E6on"});
  CHECK(basic_tokenize("\u0130stanbul") == Strings{"istanbul"});  // İ -> i + dot above -> i
  CHECK(basic_tokenize("e\u0301") == Strings{"e"});               // already decomposed
  CHECK(basic_tokenize("\u1EC7") == Strings{"e"});                // ệ: two marks
  CHECK(basic_tokenize("\u0419\u043E\u0433\u0443\u0440\u0442") ==
        Strings{"\u0438\u043E\u0433\u0443\u0440\u0442"});  // Йогурт -> иогурт
  // Python's lower(): final sigma at the end of a word only.
  CHECK(basic_tokenize("\u039F\u0394\u039F\u03A3") == Strings{"\u03BF\u03B4\u03BF\u03C2"});
  CHECK(basic_tokenize("\u03A3\u039F") == Strings{"\u03C3\u03BF"});
  CHECK(basic_tokenize("\u0386\u03A3\u039F\u03A3,") ==
        Strings{"\u03B1\u03C3\u03BF\u03C2", ","});
  // 한 (U+D55C) = jamo U+1112 U+1161 U+11AB.
  CHECK(basic_tokenize("\uD55C") == Strings{"\u1112\u1161\u11AB"});
}

TEST_CASE("cleaning drops control characters and splits on every kind of space", "[tokenizer]") {
  CHECK(basic_tokenize("a\x01" "b") == Strings{"ab"});
  CHECK(basic_tokenize("co\u00ADop") == Strings{"coop"});  // soft hyphen is Cf
  CHECK(basic_tokenize("a\u00A0b\u3000c\u2028d") == Strings{"a", "b", "c", "d"});
  CHECK(basic_tokenize("a\xFF" "b\xC3") == Strings{"ab"});  // invalid UTF-8 is dropped
  CHECK(basic_tokenize(std::string("a\0b", 3)) == Strings{"ab"});
  CHECK(basic_tokenize(" \t\n").empty());
}

TEST_CASE("WordPiece takes the longest piece first (BERT's docstring example)", "[tokenizer]") {
  WordPieceTokenizer t({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "runn",
                        "##ing", ",", "##a"});
  CHECK(t.tokenize("unaffable") == Strings{"un", "##aff", "##able"});
  CHECK(t.encode("unaffable, running") == Ids{4, 5, 6, 9, 7, 8});
  CHECK(t.tokenize("unaffablex") == Strings{"[UNK]"});  // no piece for "x": the whole word
  CHECK(t.tokenize("Unaffable unknown") == Strings{"un", "##aff", "##able", "[UNK]"});
  CHECK(t.tokenize("un" + std::string(98, 'a')).size() == 99);  // 100 chars: un ##a ... ##a
  CHECK(t.tokenize("un" + std::string(99, 'a')) == Strings{"[UNK]"});  // 101 chars
  CHECK(t.decode(t.encode("unaffable, running")) == "unaffable , running");
}

TEST_CASE("bert-base-uncased ids match published tokenizations", "[tokenizer]") {
  const auto& t = bert();
  REQUIRE(t.size() == 30522);
  CHECK(t.id("the") == 1996);
  CHECK(t.id("hello") == 7592);
  CHECK(t.id("##s") == 2015);
  CHECK(t.id(".") == 1012);
  CHECK(t.pad_id() == 0);
  CHECK(t.unk_id() == 100);
  CHECK(t.cls_id() == 101);
  CHECK(t.sep_id() == 102);
  CHECK(t.id("[MASK]") == 103);
  CHECK(t.token(1) == "[unused0]");
  // The classic BERT tutorial sentence.
  CHECK(t.tokenize("Here is the sentence I want embeddings for.") ==
        Strings{"here", "is", "the", "sentence", "i", "want", "em", "##bed", "##ding", "##s",
                "for", "."});
  CHECK(t.encode("Here is the sentence I want embeddings for.") ==
        Ids{2182, 2003, 1996, 6251, 1045, 2215, 7861, 8270, 4667, 2015, 2005, 1012});
  CHECK(t.encode("i like strawberries") == Ids{1045, 2066, 13137, 20968});
  CHECK(t.encode("Héllo, World!") == Ids{7592, 1010, 2088, 999});
  CHECK(t.tokenize("unaffable") == Strings{"una", "##ffa", "##ble"});
  // ΟΔΟΣ -> οδος; "##ος" exists, "##οσ" does not: the final sigma decides the split.
  CHECK(t.tokenize("\u039F\u0394\u039F\u03A3") == Strings{"\u03BF", "##\u03B4", "##\u03BF\u03C2"});
  CHECK(t.encode("\u039F\u0394\u039F\u03A3") == Ids{1169, 29722, 15297});
  CHECK(t.encode("\uD55C") == Ids{1469, 30006, 30021});
  CHECK(t.encode("hello\U0001F600 world") == Ids{100, 2088});  // no piece for the emoji
}

TEST_CASE("decode glues continuation pieces and skips padding", "[tokenizer]") {
  const auto& t = bert();
  CHECK(t.decode(t.encode("Here is the sentence I want embeddings for.")) ==
        "here is the sentence i want embeddings for .");
  CHECK(t.decode({101, 7592, 102, 0, 0}) == "[CLS] hello [SEP]");
  CHECK_THROWS_WITH(t.decode({30522}), Contains("token id 30522 is outside the vocabulary"));
}

TEST_CASE("vocabulary problems are reported clearly", "[tokenizer]") {
  CHECK_THROWS_WITH(WordPieceTokenizer({"[PAD]", "[CLS]", "[SEP]"}), Contains("no [UNK] token"));
  CHECK_THROWS_WITH(WordPieceTokenizer({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "a"}),
                    Contains("token 'a' appears twice (ids 4 and 5)"));
  CHECK_THROWS_WITH(WordPieceTokenizer::from_file("/nonexistent/vocab.txt"),
                    Contains("/nonexistent/vocab.txt not found") && Contains("scripts/setup.sh"));
}
