#include "core/util/gzip_lines.h"

#include "core/util/error.h"

#include <zlib.h>

#include <algorithm>
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

namespace {

void check_stream(gzFile file, const std::string& path, int64_t line) {
  int code = Z_OK;
  const char* message = gzerror(file, &code);
  if (code != Z_OK && code != Z_STREAM_END)
    throw Error(path + ":" + std::to_string(line) + ": the gzip stream is damaged (" + message +
                "); fetch or write the file again");
}

}  // namespace

bool GzipLineReader::fill() {
  const auto file = static_cast<gzFile>(file_);
  const int n = gzread(file, block_.data(), static_cast<unsigned>(block_.size()));
  check_stream(file, path_, line_ + 1);
  begin_ = 0;
  end_ = n > 0 ? static_cast<size_t>(n) : 0;
  return end_ > 0;
}

bool GzipLineReader::next(std::string& line) {
  line.clear();
  bool any = false;
  while (begin_ < end_ || fill()) {
    any = true;
    const char* start = block_.data() + begin_;
    const auto* newline = static_cast<const char*>(std::memchr(start, '\n', end_ - begin_));
    if (newline) {
      line.append(start, newline);
      begin_ += static_cast<size_t>(newline - start) + 1;
      ++line_;
      return true;
    }
    line.append(start, end_ - begin_);
    begin_ = end_;
  }
  if (!any) return false;
  ++line_;  // the last line, without a newline
  return true;
}

int64_t count_lines(const std::string& path) {
  const gzFile file = gzopen(path.c_str(), "rb");
  if (!file) throw Error(path + ": cannot open the file to count its lines");
  std::vector<char> chunk(1 << 20);
  int64_t lines = 0;
  bool open_line = false;
  int n;
  while ((n = gzread(file, chunk.data(), static_cast<unsigned>(chunk.size()))) > 0) {
    lines += std::count(chunk.data(), chunk.data() + n, '\n');
    open_line = chunk[static_cast<size_t>(n) - 1] != '\n';
  }
  try {
    check_stream(file, path, lines + 1);
  } catch (...) {
    gzclose(file);
    throw;
  }
  gzclose(file);
  return lines + (open_line ? 1 : 0);
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
