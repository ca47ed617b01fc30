#include "dataprep/wordnet.h"

#include "core/data/mnli.h"
#include "core/util/error.h"
#include "core/util/random.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <unordered_map>

namespace fs = std::filesystem;

namespace comera {
namespace {

constexpr const char* kSplitNames[] = {"train", "dev", "test"};
constexpr const char kLabelLetters[] = {'e', 'n', 'c'};
constexpr int kFirstNounFile = 3, kNounFiles = 26;  // noun.Tops .. noun.time
// Random draws of a pair's other category before the anchor is dropped: a miss is only likely
// where the lexicographer file has no other category at all.
constexpr int kDrawTries = 50;
constexpr uint64_t kTextStream = 0x9e3779b97f4a7c15;  // any constant: a second seed per split

// Thrown by the line parser; read_wordnet_data adds the file and the line.
struct Malformed {
  std::string what;
};

// The space-separated fields of one data line, in order.
class Fields {
 public:
  explicit Fields(const std::string& line) : line_(line) {}

  std::string next(const std::string& what) {
    while (pos_ < line_.size() && line_[pos_] == ' ') ++pos_;
    if (pos_ >= line_.size()) throw Malformed{"the line ends before " + what};
    const size_t end = std::min(line_.find(' ', pos_), line_.size());
    std::string field = line_.substr(pos_, end - pos_);
    pos_ = end;
    return field;
  }

  // Everything after the current field, without the surrounding spaces.
  std::string rest() const {
    const size_t begin = line_.find_first_not_of(' ', pos_);
    if (begin == std::string::npos) return "";
    return line_.substr(begin, line_.find_last_not_of(' ') + 1 - begin);
  }

 private:
  const std::string& line_;
  size_t pos_ = 0;
};

// A field of exactly `width` digits in `base` (10 or 16).
int64_t number(const std::string& field, size_t width, int base, const std::string& what) {
  const char* digits = base == 16 ? "0123456789abcdefABCDEF" : "0123456789";
  if (field.size() != width || field.find_first_not_of(digits) != std::string::npos)
    throw Malformed{what + " '" + field + "' is not " + std::to_string(width) +
                    (base == 16 ? " hexadecimal" : " decimal") + " digits"};
  return std::stoll(field, nullptr, base);
}

const char* pos_prefix(char type) {
  switch (type) {
    case 'n': return "noun.";
    case 'v': return "verb.";
    case 'a': case 's': return "adj.";
    case 'r': return "adv.";
    default: return nullptr;
  }
}

// The word of a "word lex_id" pair: underscores as spaces, an adjective's syntactic marker
// ("(a)", "(p)", "(ip)") removed.
std::string lemma(std::string word, char type) {
  if (type == 'a' || type == 's') {
    for (const char* marker : {"(a)", "(p)", "(ip)"}) {
      const std::string m = marker;
      if (word.size() > m.size() && word.compare(word.size() - m.size(), m.size(), m) == 0) {
        word.resize(word.size() - m.size());
        break;
      }
    }
  }
  std::replace(word.begin(), word.end(), '_', ' ');
  return word;
}

// The ss_types a data file holds, by its name ("" when the name is not data.noun etc.).
std::string file_types(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  if (name == "data.noun") return "n";
  if (name == "data.verb") return "v";
  if (name == "data.adj") return "as";
  if (name == "data.adv") return "r";
  return "";
}

Synset parse_synset(const std::string& line, int64_t byte_offset, const std::string& types) {
  Fields f(line);
  Synset s;
  s.offset = number(f.next("the synset offset"), 8, 10, "synset offset");
  if (s.offset != byte_offset)
    throw Malformed{"synset offset " + std::to_string(s.offset) + " is not the line's byte offset " +
                    std::to_string(byte_offset) + " (offsets are byte positions: the file was "
                    "edited or its line ends converted)"};
  s.lex_file = static_cast<int>(number(f.next("lex_filenum"), 2, 10, "lex_filenum"));
  const auto& files = lexicographer_files();
  if (s.lex_file >= static_cast<int>(files.size()))
    throw Malformed{"lex_filenum " + std::to_string(s.lex_file) + " is past the last lexicographer file (" +
                    std::to_string(files.size() - 1) + ")"};
  const std::string type = f.next("ss_type");
  const char* prefix = type.size() == 1 ? pos_prefix(type[0]) : nullptr;
  if (!prefix) throw Malformed{"ss_type '" + type + "' is not n, v, a, s or r"};
  s.type = type[0];
  if (!types.empty() && types.find(s.type) == std::string::npos)
    throw Malformed{"ss_type " + type + " in a file of ss_type " + types};
  if (files[s.lex_file].rfind(prefix, 0) != 0)
    throw Malformed{"lex_filenum " + std::to_string(s.lex_file) + " (" + files[s.lex_file] +
                    ") is not a lexicographer file of ss_type " + type};
  const int64_t words = number(f.next("w_cnt"), 2, 16, "w_cnt");
  if (words < 1) throw Malformed{"w_cnt is 0: a synset has at least one word"};
  for (int64_t w = 0; w < words; ++w) {
    const std::string which = "word " + std::to_string(w + 1) + " of " + std::to_string(words);
    s.lemmas.push_back(lemma(f.next(which), s.type));
    number(f.next("the lex_id of " + which), 1, 16, "lex_id of " + which);
  }
  const int64_t pointers = number(f.next("p_cnt"), 3, 10, "p_cnt");
  for (int64_t p = 0; p < pointers; ++p) {
    const std::string which = "pointer " + std::to_string(p + 1) + " of " + std::to_string(pointers);
    const std::string symbol = f.next(which);
    if (symbol == "|") throw Malformed{"the gloss starts at " + which + " (p_cnt too large?)"};
    const int64_t target = number(f.next("the offset of " + which), 8, 10, "offset of " + which);
    const std::string pos = f.next("the part of speech of " + which);
    if (pos.size() != 1 || !pos_prefix(pos[0]))
      throw Malformed{"part of speech '" + pos + "' of " + which + " is not n, v, a, s or r"};
    if ((symbol == "@" || symbol == "@i") && pos[0] == s.type) s.hypernyms.push_back(target);
    number(f.next("the source/target of " + which), 4, 16, "source/target of " + which);
  }
  if (s.type == 'v') {
    const int64_t frames = number(f.next("f_cnt"), 2, 10, "f_cnt");
    for (int64_t k = 0; k < frames; ++k) {
      const std::string which = "frame " + std::to_string(k + 1) + " of " + std::to_string(frames);
      if (f.next(which) != "+") throw Malformed{which + " does not start with '+'"};
      number(f.next("the f_num of " + which), 2, 10, "f_num of " + which);
      number(f.next("the w_num of " + which), 2, 16, "w_num of " + which);
    }
  }
  const std::string bar = f.next("the gloss ('|')");
  if (bar != "|") throw Malformed{"'" + bar + "' where the gloss ('|') should start (a count too small?)"};
  s.gloss = f.rest();
  if (s.gloss.empty()) throw Malformed{"the gloss is empty"};
  return s;
}

std::string lemma_list(const Synset& s) {
  std::string out;
  for (const auto& l : s.lemmas) out += (out.empty() ? "" : ", ") + l;
  return out;
}

std::string synset_id(const Synset& s) {
  std::string offset = std::to_string(s.offset);
  return std::string(1, s.type) + std::string(8 - std::min<size_t>(8, offset.size()), '0') + offset;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

class Groups {
 public:
  explicit Groups(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), size_t{0}); }
  size_t find(size_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void join(size_t a, size_t b) { parent_[find(a)] = find(b); }

 private:
  std::vector<size_t> parent_;
};

std::vector<std::vector<size_t>> synset_groups(const std::vector<Synset>& synsets) {
  Groups groups(synsets.size());
  std::unordered_map<std::string, size_t> first;  // a lemma or gloss -> the first synset with it
  for (size_t i = 0; i < synsets.size(); ++i) {
    std::vector<std::string> keys{"g:" + synsets[i].gloss};
    for (const auto& l : synsets[i].lemmas) keys.push_back("l:" + lower(l));
    for (const auto& key : keys) {
      const auto [it, added] = first.emplace(key, i);
      if (!added) groups.join(i, it->second);
    }
  }
  std::map<size_t, std::vector<size_t>> members;  // by root, members in file order
  for (size_t i = 0; i < synsets.size(); ++i) members[groups.find(i)].push_back(i);
  std::vector<std::vector<size_t>> out;
  for (auto& entry : members) out.push_back(std::move(entry.second));
  return out;
}

nlohmann::json split_json(const WordNetSplit& s) {
  return {{"text_file", s.text_file}, {"pair_file", s.pair_file}, {"groups", s.groups},
          {"synsets", s.synsets}, {"per_class", s.per_class}, {"pairs", s.pairs},
          {"entailment", s.per_pair_label[0]}, {"neutral", s.per_pair_label[1]},
          {"contradiction", s.per_pair_label[2]}, {"anchors_dropped", s.anchors_dropped}};
}

void write_rows(const std::string& file, const std::vector<nlohmann::json>& rows) {
  fs::create_directories(fs::path(file).parent_path());
  std::ofstream out(file, std::ios::binary);
  for (const auto& row : rows) out << row.dump() << '\n';
  if (!out) throw Error("cannot write " + file + "; check that the folder is writable");
}

}  // namespace

const std::vector<std::string>& lexicographer_files() {
  static const std::vector<std::string> names = {
      "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
      "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event",
      "noun.feeling", "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object",
      "noun.person", "noun.phenomenon", "noun.plant", "noun.possession", "noun.process",
      "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time",
      "verb.body", "verb.change", "verb.cognition", "verb.communication", "verb.competition",
      "verb.consumption", "verb.contact", "verb.creation", "verb.emotion", "verb.motion",
      "verb.perception", "verb.possession", "verb.social", "verb.stative", "verb.weather",
      "adj.ppl"};
  return names;
}

std::string default_wordnet_source() { return "/usr/share/wordnet"; }

std::string Synset::definition() const {
  const size_t example = gloss.find("; \"");
  if (example == std::string::npos || example == 0) return gloss;
  return gloss.substr(0, example);
}

std::vector<Synset> read_wordnet_data(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error("cannot open " + path + ": install Debian's wordnet-base (scripts/setup.sh) or "
                "point --source at a folder with WordNet 3.0's data.* files");
  const std::string types = file_types(path);
  std::vector<Synset> synsets;
  int64_t line_no = 0, byte_offset = 0;
  for (std::string line; std::getline(in, line); byte_offset += static_cast<int64_t>(line.size()) + 1) {
    ++line_no;
    try {
      if (line.empty()) throw Malformed{"empty line"};
      if (line[0] == ' ') {
        if (!synsets.empty()) throw Malformed{"a licence line (starting with a space) after the synsets"};
        continue;
      }
      synsets.push_back(parse_synset(line, byte_offset, types));
    } catch (const Malformed& m) {
      throw Error(path + ":" + std::to_string(line_no) + ": " + m.what +
                  " (expected WordNet 3.0's wndb(5) format; reinstall wordnet-base or fix the line)");
    }
  }
  if (synsets.empty()) throw Error(path + " holds no synsets: expected a WordNet 3.0 data file");
  return synsets;
}

std::vector<int> split_synsets(const std::vector<Synset>& synsets, const std::array<double, 3>& shares,
                               uint64_t seed) {
  auto groups = synset_groups(synsets);
  Rng rng(seed);
  rng.shuffle(groups);
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return a.size() > b.size(); });
  std::array<int64_t, 3> taken{};
  int64_t assigned = 0;
  std::vector<int> split(synsets.size(), 0);
  for (const auto& group : groups) {
    const auto size = static_cast<int64_t>(group.size());
    int best = 0;
    double best_gap = -std::numeric_limits<double>::infinity();
    for (int s = 0; s < 3; ++s) {
      if (shares[s] <= 0) continue;
      const double gap = shares[s] * static_cast<double>(assigned + size) - static_cast<double>(taken[s]);
      if (gap > best_gap) best = s, best_gap = gap;
    }
    for (size_t i : group) split[i] = best;
    taken[best] += size;
    assigned += size;
  }
  return split;
}

nlohmann::json WordNetSummary::to_json() const {
  return {{"source", source_dir}, {"seed", seed}, {"all_pos", all_pos}, {"lemmas", lemmas},
          {"classes", classes}, {"synsets", synsets}, {"groups", groups},
          {"largest_group", largest_group}, {"train", split_json(train)},
          {"dev", split_json(dev)}, {"test", split_json(test)}};
}

WordNetSummary build_wordnet(const WordNetOptions& options) {
  auto log = [&](const std::string& line) {
    if (options.log) options.log(line);
  };
  if (options.dev_fraction <= 0 || options.test_fraction <= 0 ||
      options.dev_fraction + options.test_fraction >= 1)
    throw Error("dev and test fractions must be > 0 and leave room for train (e.g. 0.1 and 0.1)");

  WordNetSummary summary;
  summary.source_dir = options.source_dir;
  summary.seed = options.seed;
  summary.all_pos = options.all_pos;
  summary.lemmas = options.lemmas;
  const auto& files = lexicographer_files();
  const int first_class = options.all_pos ? 0 : kFirstNounFile;
  const int classes = options.all_pos ? static_cast<int>(files.size()) : kNounFiles;
  summary.classes.assign(files.begin() + first_class, files.begin() + first_class + classes);

  std::vector<Synset> synsets;
  for (const char* name : {"data.noun", "data.verb", "data.adj", "data.adv"}) {
    const auto path = (fs::path(options.source_dir) / name).string();
    if (!fs::exists(path))
      throw Error(path + " not found: install Debian's wordnet-base (scripts/setup.sh) or pass "
                  "--source DIR (a folder with WordNet 3.0's data.* files)");
    auto read = read_wordnet_data(path);
    log("read " + path + ": " + std::to_string(read.size()) + " synsets");
    synsets.insert(synsets.end(), std::make_move_iterator(read.begin()), std::make_move_iterator(read.end()));
    if (!options.all_pos) break;
  }
  summary.synsets = static_cast<int64_t>(synsets.size());
  auto label = [&](const Synset& s) { return static_cast<int64_t>(s.lex_file - first_class); };

  Rng rng(options.seed);
  const double train_share = 1 - options.dev_fraction - options.test_fraction;
  const auto split = split_synsets(synsets, {train_share, options.dev_fraction, options.test_fraction},
                                   rng.below(std::numeric_limits<uint64_t>::max()));
  const auto groups = synset_groups(synsets);
  summary.groups = static_cast<int64_t>(groups.size());
  for (const auto& g : groups) summary.largest_group = std::max<int64_t>(summary.largest_group, g.size());

  // Categories: synsets that are another synset's hypernym, by class, in file order.
  std::map<std::pair<char, int64_t>, size_t> by_offset;
  for (size_t i = 0; i < synsets.size(); ++i) by_offset.emplace(std::make_pair(synsets[i].type, synsets[i].offset), i);
  auto hypernym = [&](const Synset& s, int64_t offset) -> const size_t* {
    const auto it = by_offset.find({s.type, offset});
    return it == by_offset.end() ? nullptr : &it->second;
  };
  std::vector<bool> is_category(synsets.size(), false);
  for (const auto& s : synsets)
    for (int64_t h : s.hypernyms)
      if (const size_t* k = hypernym(s, h)) is_category[*k] = true;
  std::vector<std::vector<size_t>> categories_of(static_cast<size_t>(classes));
  for (size_t i = 0; i < synsets.size(); ++i)
    if (is_category[i]) categories_of[static_cast<size_t>(label(synsets[i]))].push_back(i);

  WordNetSplit* results[] = {&summary.train, &summary.dev, &summary.test};
  for (const auto& g : groups) ++results[split[g.front()]]->groups;
  for (int s = 0; s < 3; ++s) {
    WordNetSplit& result = *results[s];
    // A stream per split: dev and test do not depend on how many draws train makes. The texts'
    // order has a stream of its own, so changing how pairs are drawn leaves the texts alone.
    const uint64_t split_seed = rng.below(std::numeric_limits<uint64_t>::max());
    Rng split_rng(split_seed), text_rng(split_seed ^ kTextStream);
    std::vector<size_t> members;
    for (size_t i = 0; i < synsets.size(); ++i)
      if (split[i] == s) members.push_back(i);
    result.synsets = static_cast<int64_t>(members.size());
    result.per_class.assign(static_cast<size_t>(classes), 0);

    std::vector<nlohmann::json> texts, pairs;
    for (size_t i : members) {
      const Synset& syn = synsets[i];
      const int64_t y = label(syn);
      ++result.per_class[static_cast<size_t>(y)];
      texts.push_back({{"text", options.lemmas ? lemma_list(syn) + ": " + syn.gloss : syn.gloss},
                       {"label", y},
                       {"lexname", files[syn.lex_file]},
                       {"synset", synset_id(syn)},
                       {"lemmas", syn.lemmas}});

      const size_t* own = syn.hypernyms.empty() ? nullptr : hypernym(syn, syn.hypernyms.front());
      auto draw = [&](const std::vector<size_t>& pool, bool same_class) -> const Synset* {
        for (int tries = 0; tries < kDrawTries && !pool.empty(); ++tries) {
          const size_t k = pool[split_rng.below(pool.size())];
          const Synset& other = synsets[k];
          const bool related = k == i || std::find(syn.hypernyms.begin(), syn.hypernyms.end(),
                                                   other.offset) != syn.hypernyms.end();
          if ((label(other) == y) == same_class && !related) return &other;
        }
        return nullptr;
      };
      const Synset* neutral = own ? draw(categories_of[static_cast<size_t>(y)], true) : nullptr;
      // Another file drawn uniformly, not by its size, so small files' categories come up too.
      const Synset* contradiction = nullptr;
      for (int tries = 0; neutral && !contradiction && tries < kDrawTries; ++tries) {
        const auto other_file = static_cast<size_t>(split_rng.below(static_cast<uint64_t>(classes)));
        if (static_cast<int64_t>(other_file) != y) contradiction = draw(categories_of[other_file], false);
      }
      if (!contradiction) {
        ++result.anchors_dropped;
        continue;
      }
      const std::string prompt = std::to_string(i);
      const Synset* sources[] = {&synsets[*own], neutral, contradiction};
      for (size_t k = 0; k < 3; ++k) {
        const char* name = nli_label_name(static_cast<NliLabel>(k));
        pairs.push_back({{"annotator_labels", {name}},
                         {"genre", files[syn.lex_file]},
                         {"gold_label", name},
                         {"pairID", prompt + kLabelLetters[k]},
                         {"promptID", prompt},
                         {"sentence1", syn.definition()},
                         {"sentence2", lemma_list(*sources[k]) + ": " + sources[k]->definition()},
                         {"synset", synset_id(syn)},
                         {"category", synset_id(*sources[k])}});
        ++result.per_pair_label[k];
      }
    }
    text_rng.shuffle(texts);
    split_rng.shuffle(pairs);
    const std::string file = std::string(kSplitNames[s]) + ".jsonl";
    result.text_file = (fs::path(options.out_dir) / file).string();
    result.pair_file = (fs::path(options.out_dir) / "pairs" / file).string();
    result.pairs = static_cast<int64_t>(pairs.size());
    write_rows(result.text_file, texts);
    write_rows(result.pair_file, pairs);
    log(std::string(kSplitNames[s]) + ": " + std::to_string(result.synsets) + " synsets in " +
        std::to_string(result.groups) + " groups -> " + result.text_file + "; " +
        std::to_string(result.pairs) + " pairs -> " + result.pair_file);
  }
  std::ofstream(fs::path(options.out_dir) / "summary.json") << summary.to_json().dump(2) << '\n';
  return summary;
}

}  // namespace comera
