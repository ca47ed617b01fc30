#include "core/data/data_format.h"

#include "core/util/registry.h"

namespace comera {

namespace {

// Built-in formats are listed here rather than registered by static objects, which the linker
// drops from a static library when nothing else refers to their file.
Registry<DataFormat>& registry() {
  static Registry<DataFormat> r("data format", {pairs_format(), text_format(), codesearchnet_format(), criteo_format()});
  return r;
}

}  // namespace

void register_data_format(std::shared_ptr<const DataFormat> format) { registry().add(std::move(format)); }

const DataFormat& find_data_format(const std::string& name) { return registry().find(name); }

std::vector<std::string> data_format_names() { return registry().names(); }

std::vector<std::shared_ptr<const DataFormat>> data_formats() { return registry().entries(); }

}  // namespace comera
