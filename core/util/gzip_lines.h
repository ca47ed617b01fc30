#pragma once
// Text files read line by line whether gzip-compressed or not (zlib reads plain files as they
// are), and gzip-compressed text written: CodeSearchNet ships its functions as .jsonl.gz.
#include <cstdint>
#include <string>

namespace comera {

class GzipLineReader {
 public:
  // Throws comera::Error naming the file when it cannot be opened.
  explicit GzipLineReader(const std::string& path);
  ~GzipLineReader();
  GzipLineReader(const GzipLineReader&) = delete;
  GzipLineReader& operator=(const GzipLineReader&) = delete;

  // The next line without its '\n' (any length); false at the end. A damaged or truncated
  // gzip stream is an error naming the file and the line.
  bool next(std::string& line);
  int64_t line_number() const { return line_; }

 private:
  std::string path_;
  void* file_ = nullptr;  // gzFile
  int64_t line_ = 0;
};

// Writes `text` to `path` gzip-compressed (a complete file; errors name it).
void write_gzip(const std::string& path, const std::string& text);

}  // namespace comera
