// Masked-LM pre-training: BERT's token corruption, the tied decoder and its chunked loss against
// plain ATen in float64, sequence-length phases, a pre-training run that learns, and starting a
// classifier from its checkpoint.
#include "core/data/pair_dataset.h"
#include "core/data/token_masking.h"
#include "core/kernels/fast_kernels.h"
#include "core/layers/ttm_embedding.h"
#include "core/models/chunked_cross_entropy.h"
#include "core/models/model_kind.h"
#include "core/models/transformer.h"
#include "core/training/checkpoint.h"
#include "core/training/rank_truncation.h"
#include "core/training/trainer.h"
#include "core/training/training_step.h"
#include "core/util/config_reader.h"
#include "core/util/error.h"
#include "core/util/memory_meter.h"
#include "tests/support/catch.h"
#include "tests/support/temp_dir.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/autograd.h>

#include <filesystem>
#include <fstream>
#include <random>

using namespace comera;
using Catch::Matchers::Contains;

namespace {

constexpr int64_t kPad = 0, kCls = 1, kSep = 2, kMask = 3, kVocab = 64;

MaskingOptions masking(double p = 0.15) {
  MaskingOptions m;
  m.probability = p;
  m.mask_id = kMask;
  m.vocab_size = kVocab;
  m.never = {kPad, kCls, kSep};
  return m;
}

// Pairs whose second segment repeats the first (4 words each side): a masked token of either
// side can be read 5 positions away, so masked-LM accuracy can rise far above the unigram rate.
PairDataset copy_pairs(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<EncodedTokens> pairs;
  for (int64_t i = 0; i < n; ++i) {
    EncodedTokens p;
    std::vector<int64_t> words;
    const int64_t length = 4;
    for (int64_t t = 0; t < length; ++t) words.push_back(4 + static_cast<int64_t>(rng() % 60));
    p.input_ids.push_back(kCls);
    p.input_ids.insert(p.input_ids.end(), words.begin(), words.end());
    p.input_ids.push_back(kSep);
    p.segment_ids.assign(p.input_ids.size(), 0);
    p.input_ids.insert(p.input_ids.end(), words.begin(), words.end());
    p.input_ids.push_back(kSep);
    p.segment_ids.resize(p.input_ids.size(), 1);
    pairs.push_back(std::move(p));
  }
  return PairDataset(std::move(pairs), kPad);
}

nlohmann::json model_json(bool tensorized, bool masked_lm, int64_t classes) {
  nlohmann::json j = {{"vocab", kVocab}, {"d_model", 16}, {"heads", 2}, {"layers", 1},
                      {"ffn", 32}, {"max_positions", 16}, {"classes", classes},
                      {"masked_lm", masked_lm}, {"dropout", 0.0}, {"rank_threshold", 0.05}};
  if (tensorized)
    j["tensorized"] = {{"embedding", {{"vocab_modes", {4, 4, 4}}, {"emb_modes", {2, 2, 4}}, {"ranks", 6}}},
                       {"attention", {{"in_modes", {4, 4}}, {"out_modes", {4, 4}}, {"ranks", 6}}},
                       {"ffn_in", {{"in_modes", {4, 4}}, {"out_modes", {4, 8}}, {"ranks", 6}}},
                       {"ffn_out", {{"in_modes", {4, 8}}, {"out_modes", {4, 4}}, {"ranks", 6}}},
                       {"classifier", {{"in_modes", {4, 4}}, {"out_modes", {4, 4}}, {"ranks", 6}}}};
  return j;
}

TrainerOptions quiet(const std::string& checkpoint = "") {
  TrainerOptions o;
  o.checkpoint = checkpoint;
  return o;
}

// The copy task's vocabulary, as load_task_data would describe it.
TaskData mlm_data(const PairDataset& train, const PairDataset& eval, int64_t mask_id = kMask) {
  TaskData d{std::make_shared<PairDataset>(train), std::make_shared<PairDataset>(eval), {}, "", ""};
  d.info.vocab_size = kVocab;
  d.info.mask_id = mask_id;
  d.info.special_ids = {kPad, kCls, kSep};
  return d;
}

}  // namespace

TEST_CASE("masking chooses only real tokens, 15% of each sequence, 80/10/10", "[masked_lm]") {
  // 2048 rows of 40 tokens: [CLS] 20 words [SEP] up to 17 words [SEP], then padding.
  std::mt19937_64 rng(3);
  const int64_t B = 2048, T = 40;
  auto ids = at::full({B, T}, kPad, at::kLong);
  auto mask = at::zeros({B, T}, at::kLong);
  std::vector<int64_t> words_per_row;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t second = 1 + static_cast<int64_t>(rng() % 17);
    auto row = ids[b];
    row[0] = kCls;
    for (int64_t t = 1; t <= 20; ++t) row[t] = 4 + static_cast<int64_t>(rng() % 60);
    row[21] = kSep;
    for (int64_t t = 22; t < 22 + second; ++t) row[t] = 4 + static_cast<int64_t>(rng() % 60);
    row[22 + second] = kSep;
    mask[b].narrow(0, 0, 23 + second).fill_(1);
    words_per_row.push_back(20 + second);
  }
  const auto gen = at::make_generator<at::CPUGeneratorImpl>(7);
  const auto m = mask_tokens(ids, mask, masking(), gen);

  const auto flat_ids = ids.reshape({-1}), flat_mask = mask.reshape({-1});
  const auto out = m.input_ids.reshape({-1});
  const int64_t chosen = m.positions.numel();
  // Each row: floor(0.15 L) or that + 1 of its L words; on average exactly 0.15 L (the rounding
  // adds at most a variance of 1/4 per row).
  const auto per_row = at::bincount(m.positions.div(T, "floor"), {}, B);
  int64_t words = 0;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n = per_row[b].item<int64_t>(), low = words_per_row[b] * 15 / 100;
    CHECK((n == low || n == low + 1));
    words += words_per_row[b];
  }
  CHECK(std::abs(static_cast<double>(chosen) - 0.15 * words) < 5 * 0.5 * std::sqrt(double(B)));
  CHECK(at::equal(m.targets, flat_ids.index_select(0, m.positions)));
  CHECK((m.positions.slice(0, 1) > m.positions.slice(0, 0, -1)).all().item<bool>());
  // Never a special token or padding.
  const auto at_chosen = flat_ids.index_select(0, m.positions);
  CHECK((at_chosen > kMask).all().item<bool>());
  CHECK((flat_mask.index_select(0, m.positions) == 1).all().item<bool>());
  // Everything not chosen is untouched.
  auto untouched = at::ones_like(flat_ids, at::kBool);
  untouched.index_fill_(0, m.positions, false);
  CHECK(at::equal(out.masked_select(untouched), flat_ids.masked_select(untouched)));
  // 80% [MASK], 10% kept, 10% a random id other than [PAD], [CLS], [SEP] (61 ids, one of them
  // [MASK] and one the original), each within 5 standard deviations.
  const auto now = out.index_select(0, m.positions);
  const auto changed = (now != kMask) & (now != at_chosen);
  const double n = static_cast<double>(chosen);
  const auto near = [&](double share, double p) { return std::abs(share - p) < 5 * std::sqrt(p * (1 - p) / n); };
  CHECK(near((now == kMask).sum().item<double>() / n, 0.8 + 0.1 / 61));
  CHECK(near((now == at_chosen).sum().item<double>() / n, 0.1 + 0.1 / 61));
  CHECK(near(changed.sum().item<double>() / n, 0.1 * 59 / 61));
  CHECK((now > kSep).all().item<bool>());

  // The same seed gives the same corruption.
  const auto again = mask_tokens(ids, mask, masking(), at::make_generator<at::CPUGeneratorImpl>(7));
  CHECK(at::equal(again.input_ids, m.input_ids));
  CHECK(at::equal(again.positions, m.positions));
}

TEST_CASE("masking chooses every word of a sequence equally often", "[masked_lm]") {
  // One row, 20 words (3 of 20 chosen each time), the same row 4000 times in one batch.
  const int64_t B = 4000, T = 22;
  auto row = at::arange(4, 4 + T, at::kLong);
  row[0] = kCls;
  row[T - 1] = kSep;
  const auto ids = row.expand({B, T}).contiguous();
  const auto m = mask_tokens(ids, at::ones({B, T}, at::kLong), masking(),
                             at::make_generator<at::CPUGeneratorImpl>(4));
  CHECK(m.positions.numel() == 3 * B);
  const auto per_column = at::bincount(m.positions.remainder(T), {}, T);
  CHECK(per_column[0].item<int64_t>() == 0);
  CHECK(per_column[T - 1].item<int64_t>() == 0);
  const double p = 0.15, sd = std::sqrt(B * p * (1 - p));
  for (int64_t t = 1; t < T - 1; ++t) {
    INFO("position " << t);
    CHECK(std::abs(per_column[t].item<double>() - B * p) < 5 * sd);
  }
}

TEST_CASE("masking always chooses at least one token, and refuses a batch without any",
          "[masked_lm]") {
  const auto ids = at::tensor(std::vector<int64_t>{kCls, 9, kSep, kSep}).view({1, 4});
  const auto mask = at::ones({1, 4}, at::kLong);
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const auto m = mask_tokens(ids, mask, masking(0.01), at::make_generator<at::CPUGeneratorImpl>(seed));
    REQUIRE(m.positions.numel() == 1);
    CHECK(m.positions.item<int64_t>() == 1);
    CHECK(m.targets.item<int64_t>() == 9);
  }
  const auto specials = at::tensor(std::vector<int64_t>{kCls, kSep, kPad}).view({1, 3});
  CHECK_THROWS_WITH(mask_tokens(specials, at::ones({1, 3}, at::kLong), masking(),
                                at::make_generator<at::CPUGeneratorImpl>(1)),
                    Contains("no token that masking may choose"));
}

TEST_CASE("the masked-LM decoder is tied to the word embedding (float64 reference)", "[masked_lm]") {
  for (bool tensorized : {false, true}) {
    INFO((tensorized ? "tensorized" : "dense"));
    at::manual_seed(5);
    Transformer model(parse_model_config(model_json(tensorized, true, 0)));
    model->to(at::kDouble);
    model->eval();
    at::NoGradGuard no_grad;
    const auto batch = copy_pairs(3, 9).batch({0, 1, 2});
    const auto &ids = batch.at("input_ids"), &segments = batch.at("segment_ids"),
               &mask = batch.at("attention_mask");
    const auto positions = at::tensor(std::vector<int64_t>{1, 4, 9});
    const auto logits = model->masked_lm(ids, segments, mask, positions);

    // Reference: the encoder output, then BERT's head with the table looked up id by id on the
    // TTM's naive path (its core slices contracted one after another).
    const auto params = model->named_parameters();
    const auto hidden = model->forward(ids, segments, mask)
                            .reshape({-1, 16})
                            .index_select(0, positions);
    auto h = at::gelu(at::linear(hidden, params["masked_lm.transform.weight"],
                                 params["masked_lm.transform.bias"]));
    h = at::layer_norm(h, {16}, params["masked_lm.norm.weight"], params["masked_lm.norm.bias"], 1e-12);
    const auto word = model->named_modules()["embeddings.word"];
    std::vector<at::Tensor> rows;
    for (int64_t id = 0; id < kVocab; ++id) {
      const auto one = at::full({1}, id, at::kLong);
      rows.push_back(tensorized ? word->as<TTMEmbeddingImpl>()->forward_naive(one).reshape({16})
                                : params["embeddings.word.weight"][id]);
    }
    // Logits scaled by 1/sqrt(d_model), as for T5's tied output layer.
    const auto expected = at::matmul(h, at::stack(rows).t()) / 4.0 + params["masked_lm.bias"];
    REQUIRE(logits.sizes() == expected.sizes());
    CHECK(at::allclose(logits, expected, 1e-10, 1e-10));
    // Every position at once agrees with the gathered ones.
    const auto all = model->masked_lm(ids, segments, mask);
    CHECK(at::allclose(all.reshape({-1, kVocab}).index_select(0, positions), logits, 1e-12, 1e-12));
  }
}

TEST_CASE("masked-LM pre-training learns to read a token from the other segment", "[masked_lm]") {
  const auto train = copy_pairs(400, 1), eval = copy_pairs(100, 2);
  TrainConfig c;
  c.task.kind = "masked_lm";
  c.epochs = 20;
  c.batch_size = 16;
  c.eval_batch_size = 50;
  c.optimizer.lr_other = 1e-2;
  Trainer t(parse_model_spec(model_json(false, true, 0), c.task), c, mlm_data(train, eval), quiet());
  const auto r = t.run();
  REQUIRE(r.status == RunStatus::Completed);
  INFO("masked-LM accuracy " << r.epochs.front().accuracy << " -> " << r.epochs.back().accuracy);
  // 60 word ids: guessing scores under 2%; copying from the other side is exact.
  CHECK(r.epochs.back().accuracy > 0.5);
  CHECK(r.epochs.back().eval_loss < 0.5 * r.epochs.front().eval_loss);
}

TEST_CASE("tensorized masked-LM training in bf16 tracks fp32", "[masked_lm][precision]") {
  const auto train = copy_pairs(160, 1), eval = copy_pairs(40, 2);
  TrainConfig c;
  c.task.kind = "masked_lm";
  c.epochs = 3;
  c.batch_size = 16;
  c.eval_batch_size = 40;
  c.optimizer.lr_cores = c.optimizer.lr_other = 1e-2;
  c.early.gamma = 0;
  const auto spec = parse_model_spec(model_json(true, true, 0), c.task);
  const auto r32 = Trainer(spec, c, mlm_data(train, eval), quiet()).run();
  c.precision = Precision::Bf16;
  const auto r16 = Trainer(spec, c, mlm_data(train, eval), quiet()).run();
  REQUIRE(r16.status == RunStatus::Completed);
  for (size_t e = 0; e < r32.epochs.size(); ++e) {
    INFO("epoch " << e + 1 << ": eval loss fp32 " << r32.epochs[e].eval_loss << ", bf16 " << r16.epochs[e].eval_loss);
    CHECK(std::abs(r16.epochs[e].eval_loss - r32.epochs[e].eval_loss) < 0.03 * r32.epochs[e].eval_loss);
  }
  CHECK(r16.epochs.back().eval_loss != r32.epochs.back().eval_loss);
}

TEST_CASE("a classifier starts from a pre-training checkpoint with truncated ranks",
          "[masked_lm]") {
  const auto train = copy_pairs(64, 1), eval = copy_pairs(16, 2);
  TrainConfig pre;
  pre.task.kind = "masked_lm";
  pre.epochs = 3;
  pre.batch_size = 16;
  pre.optimizer.lr_ranks = 5e-2;
  pre.early.gamma = 1.0;  // prunes rank slices, so the checkpoint's shapes are truncated
  comera::testing::TempDir dir;
  const auto checkpoint = dir.file("pre.pt");
  Trainer t(parse_model_spec(model_json(true, true, 0), pre.task), pre, mlm_data(train, eval), quiet(checkpoint));
  REQUIRE(t.run().status == RunStatus::Completed);
  const auto pre_ranks = allocated_ranks(t.model());

  TrainConfig fine;
  fine.epochs = 1;
  fine.init_from = checkpoint;
  const auto classifier = parse_model_spec(model_json(true, false, 3));
  Trainer started(classifier, fine, mlm_data(train, eval), quiet());
  const auto pre_params = t.model().named_parameters();
  int64_t compared = 0;
  for (const auto& p : started.model().named_parameters()) {
    INFO(p.key());
    if (p.key().rfind("classification.", 0) == 0) {
      CHECK_FALSE(pre_params.contains(p.key()));
      continue;
    }
    REQUIRE(pre_params.contains(p.key()));
    CHECK(at::equal(p.value(), pre_params[p.key()]));
    ++compared;
  }
  CHECK(compared > 10);
  bool truncated = false;
  for (const auto& [name, ranks] : allocated_ranks(started.model())) {
    if (name.rfind("classification.", 0) == 0) continue;
    CHECK(ranks == pre_ranks.at(name));
    truncated = truncated || ranks != std::vector<int64_t>(ranks.size(), 6);
  }
  CHECK(truncated);
  CHECK(started.run().status == RunStatus::Completed);

  // Another architecture (or the dense build) cannot start from it.
  auto wider = model_json(true, false, 3);
  wider["ffn"] = 64;
  wider["tensorized"]["ffn_in"]["out_modes"] = {8, 8};
  wider["tensorized"]["ffn_out"]["in_modes"] = {8, 8};
  CHECK_THROWS_WITH(Trainer(parse_model_spec(wider, fine.task), fine, mlm_data(train, eval), quiet()),
                    Contains("other model settings"));
  CHECK_THROWS_WITH(Trainer(parse_model_spec(model_json(false, false, 3), fine.task), fine, mlm_data(train, eval), quiet()),
                    Contains("other model settings"));
  fine.init_from = dir.file("missing.pt");
  CHECK_THROWS_WITH(Trainer(classifier, fine, mlm_data(train, eval), quiet()),
                    Contains("missing.pt does not exist") && Contains("training.init_from"));
  // A damaged checkpoint is named and left alone (no advice to delete it).
  fine.init_from = dir.file("damaged.pt");
  std::ofstream(fine.init_from) << "not a checkpoint";
  CHECK_THROWS_WITH(Trainer(classifier, fine, mlm_data(train, eval), quiet()),
                    Contains("damaged.pt cannot be read") && Contains("training.init_from") &&
                        !Contains("delete"));
  CHECK(std::filesystem::exists(fine.init_from));
  CHECK(dense_checkpoint_path("results/checkpoints/x.pt") == "results/checkpoints/x_dense.pt");
}

TEST_CASE("masked-LM training needs its head and a [MASK] id", "[masked_lm]") {
  const auto train = copy_pairs(8, 1);
  TrainConfig c;
  c.task.kind = "masked_lm";
  CHECK_THROWS_WITH(parse_model_spec(model_json(false, false, 3), c.task), Contains("model.masked_lm: true"));
  CHECK_THROWS_WITH(Trainer(parse_model_spec(model_json(false, true, 0), c.task), c,
                            mlm_data(train, train, -1), quiet()),
                    Contains("[MASK]"));
}

namespace {

// Loss and gradients of (h, table, bias), the loss scaled by 2.5 so that backward's scaling by
// the incoming gradient is checked too.
std::vector<at::Tensor> loss_and_grads(const at::Tensor& loss, const std::vector<at::Tensor>& inputs) {
  auto out = torch::autograd::grad({loss * 2.5}, inputs);
  out.insert(out.begin(), loss.detach());
  return out;
}

}  // namespace

TEST_CASE("chunked vocabulary cross-entropy matches the full-vocabulary one (float64)", "[masked_lm]") {
  at::manual_seed(11);
  const int64_t N = 13, d = 5, V = 11;
  const auto dbl = at::TensorOptions(at::kDouble);
  const auto h = at::randn({N, d}, dbl).requires_grad_(), table = at::randn({V, d}, dbl).requires_grad_(),
             bias = at::randn({V}, dbl).requires_grad_();
  const auto targets = at::randint(0, V, {N}, at::kLong);

  // Reference: every logit at once, log-softmax written out.
  const auto logits = at::matmul(h, table.t()) + bias;
  const auto log_p = logits - logits.exp().sum(1, true).log();
  const auto expected = loss_and_grads(-log_p.gather(1, targets.unsqueeze(1)).mean(), {h, table, bias});
  const int64_t expected_correct = (logits.argmax(1) == targets).sum().item<int64_t>();

  // One row per chunk, 4 rows (the last chunk short), all rows at once; and the composite path.
  for (const int64_t chunk : {V, 4 * V, 100 * V, int64_t{0}}) {
    INFO("chunk elements " << chunk << (chunk == 0 ? " (composite path)" : ""));
    FastKernelsGuard fast(chunk > 0);
    const auto r = chunked_cross_entropy(h, table, bias, targets, std::max<int64_t>(chunk, 1));
    CHECK(r.correct.item<int64_t>() == expected_correct);
    const auto got = loss_and_grads(r.loss, {h, table, bias});
    for (size_t k = 0; k < got.size(); ++k) {
      INFO("output " << k << " (loss, d h, d table, d bias)");
      CHECK(at::allclose(got[k], expected[k], 1e-12, 1e-12));
    }
    // Without gradients (evaluation) the same loss.
    at::NoGradGuard no_grad;
    CHECK(at::allclose(chunked_cross_entropy(h, table, bias, targets, std::max<int64_t>(chunk, 1)).loss,
                       expected[0], 1e-12, 1e-12));
  }
  CHECK_THROWS_WITH(chunked_cross_entropy(h, table.t(), bias, targets), Contains("table (V, d)"));
}

TEST_CASE("the chunked masked-LM loss keeps no vocabulary-sized tensor per row", "[masked_lm]") {
  at::manual_seed(12);
  const int64_t N = 512, d = 16, V = 4096;
  const auto h = at::randn({N, d}).requires_grad_(), table = at::randn({V, d}).requires_grad_(),
             bias = at::zeros({V}).requires_grad_();
  const auto targets = at::randint(0, V, {N}, at::kLong);
  const int64_t logits_bytes = N * V * 4;  // 8 MB: one (N, V) float tensor
  CpuMemoryMeter meter;
  {
    const auto r = chunked_cross_entropy(h, table, bias, targets, 32 * V);
    torch::autograd::grad({r.loss}, {h, table, bias});
  }
  // Chunks of 32 rows (0.5 MB of logits) and gradients the size of the inputs.
  CHECK(meter.peak_extra_bytes() < logits_bytes / 2);
  CpuMemoryMeter full;
  {
    FastKernelsGuard composite(false);
    const auto r = chunked_cross_entropy(h, table, bias, targets);
    torch::autograd::grad({r.loss}, {h, table, bias});
  }
  CHECK(full.peak_extra_bytes() > logits_bytes);  // the reference holds the whole logits
}

TEST_CASE("the masked-LM loss through the model agrees with full logits, TTM table included",
          "[masked_lm]") {
  for (bool tensorized : {false, true}) {
    INFO((tensorized ? "tensorized" : "dense"));
    at::manual_seed(6);
    Transformer model(parse_model_config(model_json(tensorized, true, 0)));
    model->to(at::kDouble);
    const auto batch = copy_pairs(4, 3).batch({0, 1, 2, 3});
    const auto positions = at::tensor(std::vector<int64_t>{1, 2, 7, 12, 20, 33});
    const auto targets = batch.at("input_ids").reshape({-1}).index_select(0, positions);
    const auto params = model->parameters();
    std::vector<std::vector<at::Tensor>> runs;
    for (bool fast : {true, false}) {
      FastKernelsGuard guard(fast);
      const auto l = model->masked_lm_loss(batch.at("input_ids"), batch.at("segment_ids"),
                                           batch.at("attention_mask"), positions, targets);
      auto grads = torch::autograd::grad({l.loss}, params, {}, false, false, /*allow_unused=*/true);
      grads.insert(grads.begin(), l.loss.detach());
      runs.push_back(grads);
    }
    // The reference: the logits of masked_lm() and a plain cross-entropy.
    const auto logits = model->masked_lm(batch.at("input_ids"), batch.at("segment_ids"),
                                         batch.at("attention_mask"), positions);
    CHECK(at::allclose(runs[0][0], at::cross_entropy_loss(logits, targets), 1e-12, 1e-12));
    int64_t compared = 0;
    for (size_t k = 0; k < runs[0].size(); ++k) {
      if (!runs[1][k].defined()) continue;
      REQUIRE(runs[0][k].defined());
      CHECK(at::allclose(runs[0][k], runs[1][k], 1e-10, 1e-12));
      ++compared;
    }
    CHECK(compared > 10);
  }
}

TEST_CASE("sequence-length phases cut training batches, and are read with clear errors",
          "[masked_lm]") {
  const auto read = [](const nlohmann::json& phases) {
    return read_train_config(ConfigReader({{"epochs", 4}, {"length_phases", phases}}, "training"));
  };
  const auto by_epoch = read({{{"max_length", 8}}, {{"start_epoch", 2}, {"max_length", 16}}});
  CHECK(by_epoch.length_at(0, 0) == 8);
  CHECK(by_epoch.length_at(1, 999) == 8);
  CHECK(by_epoch.length_at(2, 0) == 16);
  const auto by_step = read({{{"max_length", 8}}, {{"start_step", 10}, {"max_length", 12}},
                             {{"start_step", 20}, {"max_length", 16}}});
  CHECK(by_step.length_at(3, 9) == 8);
  CHECK(by_step.length_at(0, 10) == 12);
  CHECK(by_step.length_at(0, 25) == 16);
  CHECK(TrainConfig{}.length_at(5, 5) == 0);
  CHECK_THROWS_WITH(read({{{"start_epoch", 1}, {"max_length", 8}}}), Contains("first phase starts the run"));
  CHECK_THROWS_WITH(read({{{"max_length", 8}}, {{"max_length", 16}}}),
                    Contains("training.length_phases[1]") && Contains("add start_epoch or start_step"));
  CHECK_THROWS_WITH(read({{{"max_length", 8}}, {{"start_epoch", 4}, {"max_length", 16}}}),
                    Contains("not before training.epochs"));
  CHECK_THROWS_WITH(read({{{"max_length", 8}}, {{"start_epoch", 2}, {"max_length", 16}},
                          {{"start_epoch", 1}, {"max_length", 32}}}),
                    Contains("phases go in order"));
  CHECK_THROWS_WITH(read({{{"max_length", 8}, {"epochs", 2}}}), Contains("length_phases[0].epochs"));

  // A batch cut to 5 tokens keeps the first 5 columns of every token tensor.
  const auto batch = copy_pairs(3, 4).batch({0, 1, 2});
  const auto cut = cut_tokens(batch, 5);
  for (const char* name : {"input_ids", "segment_ids", "attention_mask"}) {
    INFO(name);
    CHECK(at::equal(cut.at(name), batch.at(name).narrow(1, 0, 5)));
  }
  CHECK(at::equal(cut.at("labels"), batch.at("labels")));
  CHECK(cut_tokens(batch, 64).at("input_ids").size(1) == batch.at("input_ids").size(1));

  // A run in two phases (6 tokens, then all 11) trains; a phase longer than the data is refused.
  const auto train = copy_pairs(64, 1), eval = copy_pairs(16, 2);
  TrainConfig c = read({{{"max_length", 6}}, {{"start_epoch", 1}, {"max_length", 11}}});
  c.task.kind = "masked_lm";
  c.epochs = 2;
  c.batch_size = 16;
  auto data = mlm_data(train, eval);
  data.info.max_length = 11;
  Trainer t(parse_model_spec(model_json(false, true, 0), c.task), c, data, quiet());
  CHECK(t.run().status == RunStatus::Completed);
  c.length_phases[1].max_length = 12;
  CHECK_THROWS_WITH(Trainer(parse_model_spec(model_json(false, true, 0), c.task), c, data, quiet()),
                    Contains("length_phases[1].max_length 12 exceeds data.max_length 11"));
}
