#include "dataprep/zip_reader.h"

#include "core/util/error.h"

#include <zlib.h>

#include <fstream>
#include <sstream>

namespace comera {

namespace {

uint64_t little_endian(const std::string& d, size_t at, int bytes) {
  uint64_t v = 0;
  for (int k = bytes - 1; k >= 0; --k) v = (v << 8) | static_cast<unsigned char>(d[at + static_cast<size_t>(k)]);
  return v;
}

}  // namespace

ZipReader::ZipReader(const std::string& path) : path_(path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open " + path + " (check the path)");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  data_ = buffer.str();
  const auto fail = [&](const std::string& what) {
    return Error(path + " is not a zip archive this reader takes (" + what + ")");
  };
  // The end-of-directory record: the last 22 bytes plus a comment of up to 64 KiB.
  size_t eocd = std::string::npos;
  if (data_.size() >= 22)
    for (size_t at = data_.size() - 22;; --at) {
      if (little_endian(data_, at, 4) == 0x06054b50) {
        eocd = at;
        break;
      }
      if (at == 0 || data_.size() - at > 22 + 65535) break;
    }
  if (eocd == std::string::npos) throw fail("no end-of-directory record");
  const uint64_t count = little_endian(data_, eocd + 10, 2);
  uint64_t at = little_endian(data_, eocd + 16, 4);
  if (count == 0xFFFF || at == 0xFFFFFFFF) throw fail("zip64 archives are not supported");
  for (uint64_t i = 0; i < count; ++i) {
    if (at + 46 > data_.size() || little_endian(data_, at, 4) != 0x02014b50)
      throw fail("directory entry " + std::to_string(i) + " is damaged");
    Entry e;
    e.method = static_cast<uint16_t>(little_endian(data_, at + 10, 2));
    e.compressed = little_endian(data_, at + 20, 4);
    e.size = little_endian(data_, at + 24, 4);
    const uint64_t name = little_endian(data_, at + 28, 2), extra = little_endian(data_, at + 30, 2),
                   comment = little_endian(data_, at + 32, 2);
    e.header_offset = little_endian(data_, at + 42, 4);
    if (at + 46 + name > data_.size()) throw fail("directory entry " + std::to_string(i) + " is cut short");
    e.name = data_.substr(at + 46, name);
    entries_.push_back(std::move(e));
    at += 46 + name + extra + comment;
  }
}

std::string ZipReader::read(const Entry& e) const {
  const auto fail = [&](const std::string& what) {
    return Error(path_ + ": " + e.name + " cannot be read (" + what + ")");
  };
  const uint64_t h = e.header_offset;
  if (h + 30 > data_.size() || little_endian(data_, h, 4) != 0x04034b50) throw fail("damaged local header");
  const uint64_t start = h + 30 + little_endian(data_, h + 26, 2) + little_endian(data_, h + 28, 2);
  if (start + e.compressed > data_.size()) throw fail("data cut short");
  if (e.method == 0) {
    if (e.compressed != e.size) throw fail("stored sizes disagree");
    return data_.substr(start, e.size);
  }
  if (e.method != 8) throw fail("compression method " + std::to_string(e.method) + " is not deflate");
  if (e.size == 0) return "";
  std::string out(e.size, '\0');
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) throw fail("zlib would not start");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data_.data() + start));
  z.avail_in = static_cast<uInt>(e.compressed);
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int code = inflate(&z, Z_FINISH);
  const uint64_t produced = z.total_out;
  inflateEnd(&z);
  if (code != Z_STREAM_END || produced != e.size) throw fail("damaged deflate data");
  return out;
}

}  // namespace comera
