#include "core/data/data_dirs.h"

#include "core/util/home_dir.h"

namespace comera {

std::string default_wordnet_dir() { return home_dir() + "/data/wordnet"; }
std::string default_pairs_dir() { return home_dir() + "/data/pairs/pystdlib"; }
std::string default_code_corpus_dir() { return home_dir() + "/data/code-corpus"; }

}  // namespace comera
