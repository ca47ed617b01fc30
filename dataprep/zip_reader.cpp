#include "dataprep/zip_reader.h"

#include "core/util/error.h"

#include <zip.h>

namespace comera {

struct ZipReader::Archive {
  zip_t* zip = nullptr;
  ~Archive() {
    if (zip) zip_discard(zip);  // read-only: nothing to write back
  }
};

namespace {

std::string zip_error_text(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

}  // namespace

ZipReader::ZipReader(const std::string& path) : path_(path), archive_(std::make_unique<Archive>()) {
  int code = 0;
  // ZIP_CHECKCONS: a directory that disagrees with the local headers is an error, not a guess.
  archive_->zip = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
  if (!archive_->zip)
    throw Error(path + " is not a zip archive that can be read (" + zip_error_text(code) + ")");
  const zip_int64_t count = zip_get_num_entries(archive_->zip, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t stat;
    zip_stat_init(&stat);
    if (zip_stat_index(archive_->zip, static_cast<zip_uint64_t>(i), 0, &stat) != 0 ||
        !(stat.valid & ZIP_STAT_NAME) || !(stat.valid & ZIP_STAT_SIZE))
      throw Error(path + ": directory entry " + std::to_string(i) + " is damaged (" +
                  zip_strerror(archive_->zip) + ")");
    entries_.push_back({stat.name, static_cast<uint64_t>(i), stat.size});
  }
}

ZipReader::~ZipReader() = default;

std::string ZipReader::read(const Entry& e) const {
  const auto fail = [&](const std::string& what) {
    return Error(path_ + ": " + e.name + " cannot be read (" + what + ")");
  };
  zip_file_t* file = zip_fopen_index(archive_->zip, e.index, 0);
  if (!file) throw fail(zip_strerror(archive_->zip));
  std::string out(e.size, '\0');
  zip_int64_t got = 0;
  while (static_cast<uint64_t>(got) < e.size) {
    const zip_int64_t n = zip_fread(file, out.data() + got, e.size - static_cast<uint64_t>(got));
    if (n <= 0) break;
    got += n;
  }
  // One byte more than the directory says means it lied about the size.
  char extra = 0;
  const bool longer = got == static_cast<zip_int64_t>(e.size) && zip_fread(file, &extra, 1) > 0;
  const std::string error = zip_file_strerror(file);
  const bool damaged = got < 0 || static_cast<uint64_t>(got) != e.size || longer ||
                       zip_error_code_zip(zip_file_get_error(file)) != ZIP_ER_OK;
  zip_fclose(file);
  if (damaged) throw fail(longer ? "longer than its directory entry says" : error);
  return out;
}

}  // namespace comera
