// WordNet's data files read by hand (fixtures: real WordNet 3.0 lines with their licence header,
// offsets recomputed for the smaller files), splits that keep every lemma and gloss in one
// split, the task files built from them, and their errors.
#include "dataprep/wordnet.h"
#include "core/util/error.h"
#include "core/util/source_dir.h"
#include "tests/support/catch.h"
#include "tests/support/temp_dir.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace comera;
using Catch::Matchers::Contains;

namespace {

std::string fixture_dir() { return comera::source_dir() + "/tests/fixtures/wordnet"; }
std::string fixture(const std::string& name) { return fixture_dir() + "/" + name; }

std::vector<std::string> file_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<nlohmann::json> rows(const std::string& path) {
  std::vector<nlohmann::json> out;
  for (const auto& line : file_lines(path)) out.push_back(nlohmann::json::parse(line));
  return out;
}

// The fixture's data.noun with synset line `index` (0-based, after the licence) replaced by
// `line` (its offset field left out), every offset recomputed; returns the 1-based line number.
int64_t write_with(const std::string& out, size_t index, const std::string& line) {
  auto lines = file_lines(fixture("data.noun"));
  size_t first = 0;
  while (lines[first][0] == ' ') ++first;
  lines[first + index] = "00000000" + line;
  std::ofstream f(out, std::ios::binary);
  size_t offset = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i >= first) {
      const std::string o = std::to_string(offset);
      lines[i].replace(0, 8, std::string(8 - o.size(), '0') + o);
    }
    f << lines[i] << '\n';
    offset += lines[i].size() + 1;
  }
  return static_cast<int64_t>(first + index + 1);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}


// The fixtures with every noun's first hypernym pointer ("@ OFFSET n") aimed at a synset of the
// fixture (most point outside it): the nearest earlier synset of the same lexicographer file,
// else entity. Line lengths and offsets stay as they are. Returns child id -> hypernym id.
std::map<std::string, std::string> write_linked(const std::string& dir) {
  std::filesystem::create_directories(dir);
  for (const char* name : {"data.verb", "data.adj", "data.adv"})
    std::filesystem::copy_file(fixture(name), dir + "/" + name);
  auto lines = file_lines(fixture("data.noun"));
  std::map<std::string, std::string> parent;
  std::map<std::string, std::string> last_of_file;  // lex_filenum -> offset of its latest synset
  std::string entity;
  std::ofstream out(dir + "/data.noun", std::ios::binary);
  for (auto& line : lines) {
    if (line[0] != ' ') {
      const std::string offset = line.substr(0, 8), file = line.substr(9, 2);
      if (entity.empty()) entity = offset;
      const size_t at = line.find(" @");
      if (at != std::string::npos && at < line.find(" | ")) {
        const size_t target = line.find(' ', at + 1) + 1;  // after "@" or "@i"
        const auto previous = last_of_file.find(file);
        const std::string to = previous != last_of_file.end() ? previous->second : entity;
        line.replace(target, 8, to);
        parent["n" + offset] = "n" + to;
      }
      last_of_file[file] = offset;
    }
    out << line << '\n';
  }
  return parent;
}
}  // namespace

TEST_CASE("data files parse field by field as wndb(5) documents them", "[wordnet]") {
  const auto nouns = read_wordnet_data(fixture("data.noun"));
  REQUIRE(nouns.size() == 56);
  CHECK(nouns[0].offset == 1740);  // the licence header is 1,740 bytes, as in WordNet itself
  CHECK(nouns[0].lex_file == 3);
  CHECK(lexicographer_files()[3] == "noun.Tops");
  CHECK(nouns[0].type == 'n');
  CHECK(nouns[0].lemmas == std::vector<std::string>{"entity"});
  CHECK(nouns[2].lemmas == std::vector<std::string>{"living thing", "animate thing"});
  const auto denizen = std::find_if(nouns.begin(), nouns.end(),
                                    [](const Synset& s) { return s.lemmas[0] == "denizen"; });
  REQUIRE(denizen != nouns.end());
  CHECK(denizen->gloss ==
        "a plant or animal naturalized in a region; \"denizens of field and forest\"; \"denizens of the deep\"");
  CHECK(denizen->definition() == "a plant or animal naturalized in a region");

  const auto verbs = read_wordnet_data(fixture("data.verb"));  // frames after the pointers
  REQUIRE(verbs.size() == 11);
  for (const auto& v : verbs) CHECK(lexicographer_files()[v.lex_file].rfind("verb.", 0) == 0);
  const auto adjectives = read_wordnet_data(fixture("data.adj"));
  bool marker_removed = false;
  for (const auto& a : adjectives)
    for (const auto& l : a.lemmas) {
      CHECK(l.find('(') == std::string::npos);
      marker_removed = marker_removed || l == "ready to hand";  // ready_to_hand(p) in the file
    }
  CHECK(marker_removed);
  CHECK(std::any_of(adjectives.begin(), adjectives.end(), [](const Synset& s) { return s.type == 's'; }));
}

TEST_CASE("malformed data lines are errors naming the file and the line", "[wordnet]") {
  comera::testing::TempDir temp;
  const std::string file = temp.file("data.noun");
  const auto base = file_lines(fixture("data.noun"));
  size_t first = 0;
  while (base[first][0] == ' ') ++first;
  const std::string denizen = base[first + 9].substr(8);  // " 05 n 01 denizen 0 001 @ ... | ..."
  REQUIRE(denizen.rfind(" 05 n 01 denizen 0 001 ", 0) == 0);
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string line = denizen;
    line.replace(line.find(from), from.size(), to);
    return line;
  };
  const std::pair<std::string, std::string> cases[] = {
      {replaced(" 01 denizen", " 02 denizen"), "lex_id of word 2 of 2 '@' is not 1 hexadecimal digits"},
      {replaced(" 001 @", " 000 @"), "'@' where the gloss ('|') should start"},
      {replaced(" 01 denizen", " 0x denizen"), "w_cnt '0x' is not 2 hexadecimal digits"},
      {replaced(" denizen 0 ", " denizen g "), "lex_id of word 1 of 1 'g'"},
      {replaced(" 05 n", " 05 v"), "ss_type v in a file of ss_type n"},
      {replaced(" 05 n", " 29 n"), "lex_filenum 29 (verb.body) is not a lexicographer file of ss_type n"},
      {replaced(" 05 n", " 45 n"), "lex_filenum 45 is past the last lexicographer file (44)"},
      {replaced(" 001 @", " 002 @"), "the gloss starts at pointer 2 of 2"},
      {replaced(" 00004475 n 0000", " 4475 n 0000"), "offset of pointer 1 of 1 '4475'"},
      {replaced(" n 0000", " x 0000"), "part of speech 'x' of pointer 1 of 1"},
      {denizen.substr(0, denizen.find(" |")), "the line ends before the gloss"},
      {denizen.substr(0, denizen.find(" |") + 3), "the gloss is empty"},
  };
  for (const auto& [line, problem] : cases) {
    INFO(line);
    const int64_t line_no = write_with(file, 9, line);
    CHECK_THROWS_WITH(read_wordnet_data(file),
                      Contains(file + ":" + std::to_string(line_no) + ": " + problem) &&
                          Contains("wndb(5)"));
  }

  // An offset that is not the line's byte position (an edited file).
  std::string text = read_all(fixture("data.noun"));
  text.replace(text.find("00001740 03"), 8, "00001741");
  std::ofstream(file, std::ios::binary) << text;
  CHECK_THROWS_WITH(read_wordnet_data(file),
                    Contains(file + ":30: synset offset 1741 is not the line's byte offset 1740"));
  // A licence line after the synsets, a missing file, an empty one.
  std::ofstream(file, std::ios::binary) << read_all(fixture("data.noun")) << "  30 trailing\n";
  CHECK_THROWS_WITH(read_wordnet_data(file), Contains(":86: a licence line"));
  CHECK_THROWS_WITH(read_wordnet_data(temp.file("data.none")), Contains("install Debian's wordnet-base"));
  std::ofstream(file, std::ios::binary) << "  1 licence only\n";
  CHECK_THROWS_WITH(read_wordnet_data(file), Contains("holds no synsets"));
}

TEST_CASE("splits keep every lemma and gloss in one split, deterministically", "[wordnet]") {
  auto synsets = read_wordnet_data(fixture("data.noun"));
  for (const char* name : {"data.verb", "data.adj", "data.adv"}) {
    auto more = read_wordnet_data(fixture(name));
    synsets.insert(synsets.end(), more.begin(), more.end());
  }
  const auto split = split_synsets(synsets, {0.6, 0.2, 0.2}, 7);
  REQUIRE(split.size() == synsets.size());
  std::map<std::string, std::set<int>> lemma_splits;
  std::array<int, 3> sizes{};
  for (size_t i = 0; i < synsets.size(); ++i) {
    ++sizes[split[i]];
    for (const auto& l : synsets[i].lemmas) lemma_splits[lower(l)].insert(split[i]);
  }
  for (const auto& [lemma, splits] : lemma_splits) {
    INFO(lemma);
    CHECK(splits.size() == 1);
  }
  // "bank" names 9 synsets of 7 lexicographer files (nouns and verbs): one group, one split.
  CHECK(lemma_splits.at("bank").size() == 1);
  CHECK(sizes[0] > sizes[1]);
  CHECK(sizes[1] > 0);
  CHECK(sizes[2] > 0);
  CHECK(split_synsets(synsets, {0.6, 0.2, 0.2}, 7) == split);
  CHECK(split_synsets(synsets, {0.6, 0.2, 0.2}, 8) != split);
}

TEST_CASE("build-wordnet writes text and pair splits that leak nothing, the same every time", "[wordnet]") {
  comera::testing::TempDir temp;
  const auto hypernym_of = write_linked(temp.file("linked"));
  WordNetOptions o;
  o.source_dir = temp.file("linked");
  o.out_dir = temp.file("nouns");
  o.dev_fraction = o.test_fraction = 0.2;
  const auto summary = build_wordnet(o);
  CHECK(summary.synsets == 56);
  REQUIRE(summary.classes.size() == 26);
  CHECK(summary.classes.front() == "noun.Tops");
  CHECK(summary.classes.back() == "noun.time");
  CHECK(summary.train.synsets + summary.dev.synsets + summary.test.synsets == 56);
  CHECK(summary.dev.synsets > 0);
  CHECK(summary.test.synsets > 0);

  std::map<std::string, int> split_of;  // synset id -> split
  std::map<std::string, int> gloss_split;
  std::map<std::string, nlohmann::json> text_of;  // synset id -> its text row
  const WordNetSplit* splits[] = {&summary.train, &summary.dev, &summary.test};
  for (int s = 0; s < 3; ++s) {
    const auto texts = rows(splits[s]->text_file);
    CHECK(static_cast<int64_t>(texts.size()) == splits[s]->synsets);
    for (const auto& row : texts) {
      const int64_t label = row.at("label");
      CHECK(label >= 0);
      CHECK(label < 26);
      CHECK(summary.classes[static_cast<size_t>(label)] == row.at("lexname"));
      split_of[row.at("synset")] = s;
      text_of[row.at("synset")] = row;
      const auto [it, added] = gloss_split.emplace(row.at("text"), s);
      CHECK((added || it->second == s));
    }
  }
  std::set<std::string> categories;
  for (const auto& [child, parent] : hypernym_of) categories.insert(parent);
  auto definition = [&](const std::string& id) {
    const std::string gloss = text_of.at(id).at("text");
    return gloss.substr(0, gloss.find("; \""));
  };
  // A pair is a definition of its own split against a category: its hypernym (entailment),
  // another category of its file (neutral), one of another file (contradiction).
  for (int s = 0; s < 3; ++s) {
    const auto pairs = rows(splits[s]->pair_file);
    CHECK(static_cast<int64_t>(pairs.size()) == splits[s]->pairs);
    CHECK(splits[s]->per_pair_label[0] == splits[s]->per_pair_label[1]);
    CHECK(splits[s]->per_pair_label[0] == splits[s]->per_pair_label[2]);
    for (const auto& row : pairs) {
      const std::string synset = row.at("synset"), category = row.at("category");
      INFO(synset << " vs " << category << ": " << row.at("gold_label"));
      CHECK(split_of.at(synset) == s);
      CHECK(row.at("sentence1") == definition(synset));
      std::string lemmas;
      for (const auto& l : text_of.at(category).at("lemmas")) lemmas += (lemmas.empty() ? "" : ", ") + l.get<std::string>();
      CHECK(row.at("sentence2") == lemmas + ": " + definition(category));
      CHECK(categories.count(category) == 1);
      const bool same_file = text_of.at(category).at("lexname") == text_of.at(synset).at("lexname");
      const std::string label = row.at("gold_label");
      if (label == "entailment") CHECK(category == hypernym_of.at(synset));
      if (label == "neutral") CHECK((same_file && category != hypernym_of.at(synset) && category != synset));
      if (label == "contradiction") CHECK(!same_file);
    }
  }
  CHECK(summary.train.pairs > 0);

  // Byte for byte the same from the same files and seed; another seed splits otherwise.
  o.out_dir = temp.file("again");
  const auto again = build_wordnet(o);
  for (const auto f : {&WordNetSplit::text_file, &WordNetSplit::pair_file}) {
    CHECK(read_all(summary.train.*f) == read_all(again.train.*f));
    CHECK(read_all(summary.dev.*f) == read_all(again.dev.*f));
    CHECK(read_all(summary.test.*f) == read_all(again.test.*f));
  }
  o.seed = 2;
  o.out_dir = temp.file("seed2");
  CHECK(read_all(build_wordnet(o).dev.text_file) != read_all(summary.dev.text_file));
}

TEST_CASE("build-wordnet: every part of speech (45 classes) and lemmas in the text", "[wordnet]") {
  comera::testing::TempDir temp;
  WordNetOptions o;
  o.source_dir = fixture_dir();
  o.out_dir = temp.file("all");
  o.all_pos = true;
  o.lemmas = true;
  o.dev_fraction = o.test_fraction = 0.2;
  const auto summary = build_wordnet(o);
  CHECK(summary.synsets == 56 + 11 + 9 + 4);
  REQUIRE(summary.classes.size() == 45);
  std::set<std::string> kinds;
  for (const auto* s : {&summary.train, &summary.dev, &summary.test})
    for (const auto& row : rows(s->text_file)) {
      const int64_t label = row.at("label");
      CHECK(lexicographer_files()[static_cast<size_t>(label)] == row.at("lexname"));
      kinds.insert(row.at("synset").get<std::string>().substr(0, 1));
      // "lemma, lemma: gloss"
      const std::string text = row.at("text");
      CHECK(text.rfind(row.at("lemmas")[0].get<std::string>() + (row.at("lemmas").size() > 1 ? ", " : ": "), 0) == 0);
    }
  CHECK(kinds == std::set<std::string>{"a", "n", "r", "s", "v"});

  o.source_dir = temp.file("nowhere");
  CHECK_THROWS_WITH(build_wordnet(o), Contains("data.noun not found") && Contains("wordnet-base"));
  o.source_dir = fixture_dir();
  o.dev_fraction = 0;
  CHECK_THROWS_WITH(build_wordnet(o), Contains("dev and test fractions"));
}
