#pragma once
// Where the built data sets are by default (what `comera data ...` writes and experiment files
// read when they name no folder): folders under data/ in comera's home (core/util/home_dir.h).
#include <string>

namespace comera {

std::string default_wordnet_dir();      // data/wordnet: the WordNet gloss task
std::string default_pairs_dir();        // data/pairs/pystdlib: code/docstring pairs
std::string default_code_corpus_dir();  // data/code-corpus: the masked-LM code corpus

// A data.dir as given; relative and missing from the working directory, the one in comera's home
// where that exists (the presets name folders under its data/, wherever comera runs from).
std::string data_dir(const std::string& dir);

}  // namespace comera
