#pragma once
// Where the built data sets are by default (what `comera data ...` writes and experiment files
// read when they name no folder): folders under data/ in comera's home (core/util/home_dir.h).
#include <string>

namespace comera {

std::string default_wordnet_dir();      // data/wordnet: the WordNet gloss task
std::string default_pairs_dir();        // data/pairs/pystdlib: code/docstring pairs
std::string default_code_corpus_dir();  // data/code-corpus: the masked-LM code corpus

}  // namespace comera
