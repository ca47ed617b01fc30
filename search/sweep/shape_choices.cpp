#include "search/sweep/shape_choices.h"

#include "core/models/model_kind.h"
#include "core/training/train_config.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"


namespace comera::sweep {

namespace {

nlohmann::json factorised(const nlohmann::json& base, int d, const std::string& where) {
  try {
    const auto training = base.value("training", nlohmann::json::object());
    const auto train = read_train_config(ConfigReader(training, "training"));
    const auto model = parse_model_spec(base.at("model"), train.task);
    return model.model_kind().factorise(model.settings, d);
  } catch (const Error& e) {
    throw Error(where + ": the base experiment: " + e.what());
  }
}

}  // namespace

std::vector<Choice> shape_choices(const nlohmann::json& entries, const nlohmann::json& base,
                                  const std::string& where) {
  std::vector<Choice> choices;
  for (size_t i = 0; i < entries.size(); ++i) {
    const ConfigReader r(entries[i], where + "[" + std::to_string(i) + "]");
    if (r.has("factorise") == r.has("tensorized"))
      throw Error(r.path() + ": give {\"factorise\": d} or {\"name\": .., \"tensorized\": {..}}");
    if (r.has("factorise")) {
      const auto d = static_cast<int>(r.integer("factorise", 0, 1, 8));
      r.finish();
      choices.push_back({{{"shape", "d=" + std::to_string(d)}},
                         {{"model.tensorized", factorised(base, d, r.path())}}});
      continue;
    }
    const std::string name = r.string("name", "");
    if (name.empty()) throw Error(r.path() + ": name the explicit shape (\"name\": \"paper\")");
    choices.push_back({{{"shape", name}}, {{"model.tensorized", r.value("tensorized")}}});
    r.finish();
  }
  return choices;
}

}  // namespace comera::sweep
