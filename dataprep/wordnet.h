#pragma once
// The default task, built from WordNet 3.0 (Debian's wordnet-base: /usr/share/wordnet). Its data
// files (data.noun, data.verb, data.adj, data.adv) are read by hand in their documented format
// (wndb(5)), and two tasks are written:
//  - single text (text_dataset.h's JSONL): a synset's gloss (optionally after its lemmas) ->
//    its lexicographer file (lexnames(5)): 26 noun classes, or all 45 over every part of speech;
//  - sentence pairs in MNLI's JSONL form, a synset's definition against a category ("lemma,
//    lemma: definition" of a synset that is some synset's hypernym): its own hypernym =
//    entailment ("a poodle is a kind of dog"), another category of its lexicographer file =
//    neutral, a category of another file (the file drawn uniformly) = contradiction.
//    Definitions are without the gloss's quoted examples, which mostly repeat the lemma itself.
// Splits leak nothing: synsets that share a lemma (case-insensitive) or a gloss are joined into
// one group, and each group goes to train, dev or test whole, so no lemma and no gloss is in
// two splits. A pair's first sentence is always a definition of its own split; the categories
// are shared by all splits, as class names are (a dev pair's exact pair is never in train).
#include "core/data/data_dirs.h"
#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace comera {

// lexnames(5): the 45 lexicographer files by lex_filenum ("adj.all", ..., "noun.Tops", ...).
const std::vector<std::string>& lexicographer_files();
// /usr/share/wordnet, where Debian's wordnet-base installs the data files.
std::string default_wordnet_source();

struct Synset {
  int64_t offset = 0;  // byte offset of its line in its data file
  int lex_file = 0;    // lex_filenum, an index into lexicographer_files()
  char type = 'n';     // ss_type: n, v, a, s (adjective satellite) or r
  std::vector<std::string> lemmas;  // underscores as spaces, adjective markers ("(p)") removed
  std::string gloss;                // definition and quoted examples, as in the file
  // Offsets of its hypernyms ('@' and '@i' pointers to its own part of speech), in file order.
  std::vector<int64_t> hypernyms;
  // The gloss before its first quoted example ("; \"..."), or the whole gloss if it has none.
  std::string definition() const;
};

// Reads one data file. Every check of wndb(5) that the file makes possible is made: the
// numbered licence lines (starting with a space) first, then one synset per line whose offset
// is its byte position, fields of the documented widths and bases, a lex_filenum of the
// synset's part of speech (and, for data.noun, data.verb, data.adj and data.adv, of the file's),
// counts that match the fields, and a gloss. A malformed line is an
// error naming the file and the line.
std::vector<Synset> read_wordnet_data(const std::string& path);

// The split (0 train, 1 dev, 2 test) of every synset: groups joined by a shared lemma or gloss,
// shuffled by `seed`, taken largest first, each to the split furthest below its share.
std::vector<int> split_synsets(const std::vector<Synset>& synsets, const std::array<double, 3>& shares,
                               uint64_t seed);

struct WordNetOptions {
  std::string source_dir = default_wordnet_source();
  std::string out_dir = default_wordnet_dir();
  bool all_pos = false;  // every part of speech, 45 classes; else nouns, 26 classes
  bool lemmas = false;   // single text: "lemma, lemma: gloss" instead of the gloss alone
  uint64_t seed = 1;
  double dev_fraction = 0.1, test_fraction = 0.1;
  std::function<void(const std::string&)> log;  // progress lines
};

struct WordNetSplit {
  std::string text_file, pair_file;  // written paths
  int64_t groups = 0, synsets = 0;
  std::vector<int64_t> per_class;    // synsets per class
  int64_t pairs = 0;
  std::array<int64_t, 3> per_pair_label{};
  int64_t anchors_dropped = 0;  // no hypernym, or no other category in its lexicographer file
};

struct WordNetSummary {
  std::string source_dir;
  uint64_t seed = 0;
  bool all_pos = false, lemmas = false;
  std::vector<std::string> classes;  // class names by label
  int64_t synsets = 0, groups = 0, largest_group = 0;
  WordNetSplit train, dev, test;
  nlohmann::json to_json() const;
};

// Reads the data files, splits, and writes {train,dev,test}.jsonl (single text),
// pairs/{train,dev,test}.jsonl and summary.json under options.out_dir. The same files, options
// and seed give byte-identical output.
WordNetSummary build_wordnet(const WordNetOptions& options);

}  // namespace comera
