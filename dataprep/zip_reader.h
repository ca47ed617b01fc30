#pragma once
// Reads the files of a zip archive through libzip (stored or deflated, zip64 too): OpenJDK's
// sources ship as one, lib/src.zip, and are read in place rather than unpacked.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace comera {

class ZipReader {
 public:
  struct Entry {
    std::string name;  // path inside the archive, '/'-separated
    uint64_t index = 0, size = 0;
  };

  // Reads the archive's directory; errors name the file and what is wrong with it.
  explicit ZipReader(const std::string& path);
  ~ZipReader();
  ZipReader(const ZipReader&) = delete;
  ZipReader& operator=(const ZipReader&) = delete;

  const std::vector<Entry>& entries() const { return entries_; }
  // The entry's contents, checked against its size and CRC.
  std::string read(const Entry& entry) const;

 private:
  struct Archive;
  std::string path_;
  std::unique_ptr<Archive> archive_;
  std::vector<Entry> entries_;
};

}  // namespace comera
