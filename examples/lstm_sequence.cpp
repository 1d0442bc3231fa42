// A character-level LSTM language model: Embed -> nn::RNN(nn::LSTMCell) (the cell scanned over
// time with lift::scan) -> Dense, trained with optim::adamw + warmup-cosine on the GPL-3 text
// under /usr/share/common-licenses; the held-out loss against the unigram entropy, then text
// sampled one step at a time by carrying the LSTM state (RNN's initial_carry / return carry).
// Flags: --steps N  --batch N  --len N  --hidden N  --lr X  --threads N  --text FILE  --sample N
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <linum/autodiff/random/random.hpp>
#include <linum/data/progress.hpp>
#include <linum/linum.hpp>

#include "char_data.hpp"

using linum::Array;
using linum::Tree;
namespace nn = linum::nn;
namespace optim = linum::optim;
using Carry = nn::LSTMCell::Carry;

struct CharLSTM : nn::Module<CharLSTM> {
  std::int64_t vocab, hidden;
  CharLSTM(std::int64_t v, std::int64_t h) : vocab(v), hidden(h) {}
  // tokens (batch, time) -> (final carry, logits (batch, time, vocab)).
  std::pair<Carry, Array> call(const Array& tokens, const std::optional<Carry>& carry) {
    Array x = nn::Embed(vocab, hidden).named("embed")(tokens);
    std::optional<Tree> init;
    if (carry) init = nn::carry_to_tree(*carry);
    auto [c, h] =
        nn::RNN(nn::LSTMCell(hidden)).named("rnn").call_with_carry(x, {.initial_carry = init});
    return {nn::carry_from_tree<Carry>(c), nn::Dense(vocab).named("head")(h)};
  }
};

int main(int argc, char** argv) {
  std::int64_t steps = 1000, batch = 16, T = 32, hidden = 128, sample_len = 300;
  double lr = 1e-2;
  int threads = 2;
  std::string path = "/usr/share/common-licenses/GPL-3";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "lstm_sequence: %s needs a value\n", a.c_str());
      return 2;
    }
    const char* v = argv[++i];
    if (a == "--steps")
      steps = std::atoll(v);
    else if (a == "--batch")
      batch = std::atoll(v);
    else if (a == "--len")
      T = std::atoll(v);
    else if (a == "--hidden")
      hidden = std::atoll(v);
    else if (a == "--lr")
      lr = std::atof(v);
    else if (a == "--threads")
      threads = std::atoi(v);
    else if (a == "--text")
      path = v;
    else if (a == "--sample")
      sample_len = std::atoll(v);
    else {
      std::fprintf(stderr, "lstm_sequence: unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  if (steps < 1 || batch < 1 || T < 2 || hidden < 1 || threads < 1) {
    std::fprintf(stderr, "lstm_sequence: sizes must be positive (--len >= 2)\n");
    return 2;
  }
  linum::set_num_threads(threads);

  linum::examples::CharData data(path);
  const std::int64_t vocab = data.vocab();
  const double unigram = data.unigram;
  std::printf("%s: %zu chars, vocab %lld; unigram entropy %.3f nats/char\n", path.c_str(),
              data.ids.size(), static_cast<long long>(vocab), unigram);

  CharLSTM model(vocab, hidden);
  auto [x0, y0] = data.windows(batch, T);
  Tree params = model.init(linum::random::PRNGKey(0), x0, std::optional<Carry>{})["params"];
  std::printf("%s",
              nn::tabulate(model, linum::random::PRNGKey(0))(x0, std::optional<Carry>{}).c_str());
  auto schedule = optim::warmup_cosine_decay_schedule(
      0.0, lr, std::max<std::int64_t>(1, steps / 20), steps, lr / 10);
  auto tx = optim::adamw(schedule, 0.9, 0.99, 1e-8, 0.0, std::nullopt, 1e-4);
  auto opt_state = tx.init(params);
  auto loss_of = [&](const Tree& p, const Array& x, const Array& y) {
    Array logits = model.apply(Tree{{"params", p}}, x, std::optional<Carry>{}).second;
    return -linum::mean(linum::sum(linum::one_hot(y, vocab) * linum::log_softmax(logits), -1));
  };

  // The running loss as an exponential moving average: over 1000 steps a mean would mostly show
  // the first ones.
  linum::data::Progress progress(steps, {.smoothing = 0.95});
  for (std::int64_t step = 1; step <= steps; ++step) {
    auto [x, y] = data.windows(batch, T);
    auto [loss, grads] =
        linum::value_and_grad([&](const Tree& p) { return loss_of(p, x, y); })(params);
    auto [updates, new_state] = tx.update(grads, opt_state, params);
    opt_state = new_state;
    params = optim::apply_updates(params, updates);
    progress.update(loss.item<double>(), batch);
  }
  progress.close();
  std::printf("trained %lld steps in %.1f s\n", static_cast<long long>(steps), progress.elapsed());
  double held = 0;
  for (int i = 0; i < 20; ++i) {
    auto [x, y] = data.windows(batch, T, true);
    held += loss_of(params, x, y).item<double>() / 20;
  }
  std::printf("held-out loss %.3f nats/char vs unigram entropy %.3f\n", held, unigram);

  // Sampling: one character at a time, the LSTM carry passed from step to step.
  Tree vars{{"params", params}};
  std::optional<Carry> carry;
  std::int32_t tok = data.id[static_cast<unsigned char>('\n')];
  Array key = linum::random::PRNGKey(1);
  std::string out;
  for (std::int64_t i = 0; i < sample_len; ++i) {
    auto [c, logits] = model.apply(vars, linum::full({1, 1}, tok, linum::int32), carry);
    carry = c;
    key = linum::random::fold_in(key, Array(static_cast<std::int32_t>(i)));
    tok = linum::random::categorical(key, logits / 0.8f).reshape({1}).data<std::int32_t>()[0];
    out.push_back(data.chars[static_cast<std::size_t>(tok)]);
  }
  std::printf("sampled:\n---\n%s\n---\n", out.c_str());
  return 0;
}
