#pragma once
// Reads the files of a zip archive (stored or deflated, no zip64): OpenJDK's sources ship as
// one, lib/src.zip, and are read in place rather than unpacked.
#include <cstdint>
#include <string>
#include <vector>

namespace comera {

class ZipReader {
 public:
  struct Entry {
    std::string name;  // path inside the archive, '/'-separated
    uint16_t method = 0;
    uint64_t compressed = 0, size = 0, header_offset = 0;
  };

  // Reads the archive's directory; errors name the file and what is wrong with it.
  explicit ZipReader(const std::string& path);
  const std::vector<Entry>& entries() const { return entries_; }
  // The entry's contents, checked against its recorded size.
  std::string read(const Entry& entry) const;

 private:
  std::string path_, data_;
  std::vector<Entry> entries_;
};

}  // namespace comera
