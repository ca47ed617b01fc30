// `comera export-model`: a trained checkpoint as one file Python loads with torch.load.
#include "core/training/model_export.h"
#include "core/util/error.h"
#include "core/util/output_file.h"
#include "search/cli/command.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>

namespace comera::cli {
namespace {

int run(int argc, char** argv) {
  auto options = make_options(
      "export-model",
      "Write a trained checkpoint as one dictionary that Python loads with torch.load: "
      "\"config\" (the run's model and training settings, JSON text), \"state_dict\" (every "
      "parameter and buffer by module path), \"tensorized_layers\" (per layer: kind, cores, rank "
      "vectors with pruned entries zeroed, ranks, modes), and with --dense-weights "
      "\"dense_state_dict\" and \"dense_config\": the dense weights rebuilt from the cores, named "
      "as in the model's dense build. See docs/training.md#exporting-a-model");
  options.add_options()("checkpoint", "Checkpoint of a `comera train` run",
                        cxxopts::value<std::string>())(
      "o,output", "File to write, e.g. model.pt", cxxopts::value<std::string>())(
      "dense-weights", "Also rebuild and write the dense weights")(
      "json", "Print what was written as JSON");
  options.parse_positional({"checkpoint"});
  options.positional_help("CHECKPOINT");
  auto parsed = parse(options, argc, argv);
  if (!parsed) return 0;
  if (!parsed->count("checkpoint"))
    throw Error("give a checkpoint, e.g. comera export-model results/checkpoints/X.pt -o model.pt");
  if (!parsed->count("output")) throw Error("give the file to write with -o, e.g. -o model.pt");
  const std::string checkpoint = (*parsed)["checkpoint"].as<std::string>();
  const std::string output = (*parsed)["output"].as<std::string>();
  const OutputFile file(output, "--output", {checkpoint});
  const auto exported = export_model(checkpoint, parsed->count("dense-weights") > 0);
  file.write([&](const std::string& temp) {
    std::ofstream out(temp, std::ios::binary);
    out.write(exported.bytes.data(), static_cast<std::streamsize>(exported.bytes.size()));
    if (!out.flush()) throw Error("could not write " + temp + " (disk full?)");
  });
  if (parsed->count("json")) {
    std::cout << nlohmann::json{{"output", output},
                                {"bytes", exported.bytes.size()},
                                {"tensors", exported.tensors},
                                {"tensorized_layers", exported.tensorized_layers},
                                {"parameters", exported.parameters},
                                {"dense_parameters", exported.dense_parameters}}
                     .dump(2)
              << std::endl;
    return 0;
  }
  std::cout << "wrote " << output << ": " << exported.tensors << " tensors, "
            << exported.tensorized_layers << " tensorized layers, " << exported.parameters
            << " parameters";
  if (exported.dense_parameters > 0)
    std::cout << "; dense weights rebuilt: " << exported.dense_parameters << " parameters";
  std::cout << "\nin Python: m = torch.load(\"" << output << "\"); m[\"state_dict\"], "
            << "m[\"tensorized_layers\"]" << (exported.dense_parameters > 0 ? ", m[\"dense_state_dict\"]" : "")
            << "\n";
  return 0;
}

Register reg("export-model", "A trained checkpoint as one file Python loads with torch.load", run);

}  // namespace
}  // namespace comera::cli
