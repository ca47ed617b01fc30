#pragma once
// The one shape of every extension point (model kinds, data formats, optimisers): named entries,
// the built-in ones listed where the registry is made, more added at run time (a plugin, a
// test). Each entry owns its settings; the registry only finds it by name.
#include "core/util/comma_list.h"
#include "core/util/error.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace comera {

// Entry has `std::string name() const`. `what` names the extension point in errors ("model
// kind", "data format", "optimiser").
template <class Entry>
class Registry {
 public:
  Registry(std::string what, std::vector<std::shared_ptr<const Entry>> built_in) : what_(std::move(what)) {
    for (auto& entry : built_in) add(std::move(entry));
  }

  // A name already taken is an error.
  void add(std::shared_ptr<const Entry> entry) {
    const auto name = entry->name();
    std::lock_guard<std::mutex> lock(mutex_);
    if (!entries_.emplace(name, std::move(entry)).second)
      throw Error(what_ + " '" + name + "' is registered already");
  }

  // Entries live as long as the process: never removed.
  const Entry& find(const std::string& name) const {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = entries_.find(name);
      if (it != entries_.end()) return *it->second;
    }
    throw Error("unknown " + what_ + " '" + name + "' (known: " + joined_names() + ")");
  }

  bool contains(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.count(name) > 0;
  }

  // Sorted.
  std::vector<std::string> names() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> out;
    for (const auto& item : entries_) out.push_back(item.first);
    return out;
  }

  std::vector<std::shared_ptr<const Entry>> entries() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::shared_ptr<const Entry>> out;
    for (const auto& item : entries_) out.push_back(item.second);
    return out;
  }

  std::string joined_names() const { return join_names(names()); }

 private:
  std::string what_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const Entry>> entries_;
};

}  // namespace comera
