#pragma once
// Text files read line by line whether gzip-compressed or not (zlib reads plain files as they
// are), and gzip-compressed text written: CodeSearchNet ships its functions as .jsonl.gz.
#include <cstdint>
#include <string>
#include <vector>

namespace comera {

class GzipLineReader {
 public:
  // Throws comera::Error naming the file when it cannot be opened.
  explicit GzipLineReader(const std::string& path);
  ~GzipLineReader();
  GzipLineReader(const GzipLineReader&) = delete;
  GzipLineReader& operator=(const GzipLineReader&) = delete;

  // The next line without its '\n' (any length, NUL bytes kept as data); false at the end. A
  // damaged or truncated gzip stream, in any of its members, is an error naming the file, the
  // line and zlib's reason.
  bool next(std::string& line);
  int64_t line_number() const { return line_; }

 private:
  bool fill();  // reads the next block; false at the end of the data

  std::string path_;
  void* file_ = nullptr;  // gzFile
  int64_t line_ = 0;
  std::vector<char> block_ = std::vector<char>(1 << 16);
  size_t begin_ = 0, end_ = 0;  // unread bytes of block_
};

// Counts the lines of a plain or gzip-compressed text file (a last line without '\n' counts);
// a damaged gzip stream is an error naming the file.
int64_t count_lines(const std::string& path);

// Writes `text` to `path` gzip-compressed (a complete file; errors name it).
void write_gzip(const std::string& path, const std::string& text);

}  // namespace comera
