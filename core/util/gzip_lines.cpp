#include "core/util/gzip_lines.h"

#include "core/util/error.h"

#include <zlib.h>

#include <cstring>

namespace comera {

GzipLineReader::GzipLineReader(const std::string& path) : path_(path) {
  file_ = gzopen(path.c_str(), "rb");
  if (!file_) throw Error("cannot open " + path + " (check the path)");
  gzbuffer(static_cast<gzFile>(file_), 1 << 16);
}

GzipLineReader::~GzipLineReader() {
  if (file_) gzclose(static_cast<gzFile>(file_));
}

bool GzipLineReader::next(std::string& line) {
  const auto file = static_cast<gzFile>(file_);
  line.clear();
  char buffer[1 << 14];
  bool any = false;
  while (gzgets(file, buffer, sizeof buffer)) {
    any = true;
    const size_t n = std::strlen(buffer);
    if (n > 0 && buffer[n - 1] == '\n') {
      line.append(buffer, n - 1);
      break;
    }
    line.append(buffer, n);
  }
  int code = Z_OK;
  const char* message = gzerror(file, &code);
  if (code != Z_OK && code != Z_STREAM_END)
    throw Error(path_ + ":" + std::to_string(line_ + 1) + ": the gzip stream is damaged (" + message +
                "); fetch the file again");
  if (!any) return false;
  ++line_;
  return true;
}

void write_gzip(const std::string& path, const std::string& text) {
  const gzFile file = gzopen(path.c_str(), "wb6");
  if (!file) throw Error("cannot write " + path + " (check the folder exists and is writable)");
  size_t done = 0;
  while (done < text.size()) {
    const auto chunk = static_cast<unsigned>(std::min<size_t>(text.size() - done, 1u << 30));
    if (gzwrite(file, text.data() + done, chunk) != static_cast<int>(chunk)) {
      gzclose(file);
      throw Error("writing " + path + " failed (disk full?)");
    }
    done += chunk;
  }
  if (gzclose(file) != Z_OK) throw Error("writing " + path + " failed (disk full?)");
}

}  // namespace comera
