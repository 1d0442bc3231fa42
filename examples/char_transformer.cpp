// A decoder-only character-level transformer trained end to end on a text that ships with Debian
// (the GPL-3 under /usr/share/common-licenses): weight-tied Embed, causal SelfAttention blocks
// with LayerNorm and an MLP, optim::adamw with a warmup-cosine schedule, linum::data's progress
// line, the held-out loss against the text's unigram entropy, then sampling through the attention
// cache (decode=true), checked first against the full causal pass. Flags: --steps N  --batch N
// --len N  --dim N  --heads N  --layers N  --lr X  --threads N
//        --text FILE  --sample N
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

struct Config {
  std::int64_t vocab = 0, dim = 64, heads = 4, layers = 2, max_len = 64;
  bool decode = false;
};

// Pre-LayerNorm block: x + attn(ln(x)), then x + mlp(ln(x)).
struct Block : nn::Module<Block> {
  Config c;
  explicit Block(Config c) : c(c) {}
  Array call(const Array& x, const std::optional<Array>& mask) {
    Array h = nn::LayerNorm()(x);
    Array y = x + nn::SelfAttention({.num_heads = c.heads, .decode = c.decode})(
                      h, nn::AttentionCallArgs{.mask = mask});
    h = nn::gelu(nn::Dense(4 * c.dim)(nn::LayerNorm()(y)));
    return y + nn::Dense(c.dim)(h);
  }
};

struct CharTransformer : nn::Module<CharTransformer> {
  Config c;
  explicit CharTransformer(Config c) : c(c) {}
  // tokens, positions: (batch, time) int32 -> logits (batch, time, vocab).
  Array call(const Array& tokens, const Array& positions) {
    auto embed = nn::Embed(c.vocab, c.dim).named("embed");
    Array x = embed(tokens);
    x = x + nn::Embed(c.max_len, c.dim).named("pos_embed")(positions);
    // While decoding, the cache masks the positions not generated yet.
    std::optional<Array> mask;
    if (!c.decode) mask = nn::make_causal_mask(tokens);
    for (std::int64_t i = 0; i < c.layers; ++i) x = Block(c)(x, mask);
    return embed.attend(nn::LayerNorm()(x));  // weight-tied output layer
  }
};

int main(int argc, char** argv) {
  std::int64_t steps = 800, batch = 16, sample_len = 300;
  Config cfg;
  double lr = 3e-3;
  int threads = 2;
  std::string path = "/usr/share/common-licenses/GPL-3";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "char_transformer: %s needs a value\n", a.c_str());
      return 2;
    }
    const char* v = argv[++i];
    if (a == "--steps")
      steps = std::atoll(v);
    else if (a == "--batch")
      batch = std::atoll(v);
    else if (a == "--len")
      cfg.max_len = std::atoll(v);
    else if (a == "--dim")
      cfg.dim = std::atoll(v);
    else if (a == "--heads")
      cfg.heads = std::atoll(v);
    else if (a == "--layers")
      cfg.layers = std::atoll(v);
    else if (a == "--lr")
      lr = std::atof(v);
    else if (a == "--threads")
      threads = std::atoi(v);
    else if (a == "--text")
      path = v;
    else if (a == "--sample")
      sample_len = std::atoll(v);
    else {
      std::fprintf(stderr, "char_transformer: unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  if (steps < 1 || batch < 1 || cfg.max_len < 2 || cfg.dim < 1 || cfg.heads < 1 ||
      cfg.dim % cfg.heads != 0 || threads < 1) {
    std::fprintf(stderr, "char_transformer: bad sizes (dim must be a multiple of heads)\n");
    return 2;
  }
  linum::set_num_threads(threads);

  // Characters -> ids; the last 10% of the text is held out.
  linum::examples::CharData data(path);
  cfg.vocab = data.vocab();
  const double unigram = data.unigram;
  std::printf("%s: %zu chars, vocab %lld; unigram entropy %.3f nats/char (%.3f bits)\n",
              path.c_str(), data.ids.size(), static_cast<long long>(cfg.vocab), unigram,
              unigram / std::log(2.0));

  const std::int64_t T = cfg.max_len;
  Array positions = linum::broadcast_to(linum::arange(T, linum::int32), {batch, T});

  CharTransformer model(cfg);
  auto [tok0, tgt0] = data.windows(batch, T);
  Tree params = model.init(linum::random::PRNGKey(0), tok0, positions)["params"];
  std::printf(
      "%s", nn::tabulate(model, linum::random::PRNGKey(0), {.depth = 1})(tok0, positions).c_str());

  auto schedule = optim::warmup_cosine_decay_schedule(
      0.0, lr, std::max<std::int64_t>(1, steps / 20), steps, lr / 10);
  auto tx = optim::adamw(schedule, 0.9, 0.98, 1e-8, 0.0, std::nullopt, 1e-2);
  auto opt_state = tx.init(params);
  auto loss_of = [&](const Tree& p, const Array& x, const Array& y, const Array& pos) {
    Array logp = linum::log_softmax(model.apply(Tree{{"params", p}}, x, pos));
    return -linum::mean(linum::sum(linum::one_hot(y, cfg.vocab) * logp, -1));
  };

  // The running loss as an exponential moving average, and the scheduled learning rate.
  linum::data::Progress progress(steps, {.smoothing = 0.95});
  for (std::int64_t step = 1; step <= steps; ++step) {
    auto [x, y] = data.windows(batch, T);
    auto [loss, grads] =
        linum::value_and_grad([&](const Tree& p) { return loss_of(p, x, y, positions); })(params);
    auto [updates, new_state] = tx.update(grads, opt_state, params);
    opt_state = new_state;
    params = optim::apply_updates(params, updates);
    char lr_text[32];
    std::snprintf(lr_text, sizeof lr_text, "lr %.2e", schedule(step - 1));
    progress.set_postfix(lr_text);
    progress.update(loss.item<double>(), batch);
  }
  progress.close();
  std::printf("trained %lld steps in %.1f s\n", static_cast<long long>(steps), progress.elapsed());

  // Held-out loss over 20 batches of the last 10% of the text.
  double held = 0;
  for (int i = 0; i < 20; ++i) {
    auto [x, y] = data.windows(batch, T, true);
    held += loss_of(params, x, y, positions).item<double>() / 20;
  }
  std::printf("held-out loss %.3f nats/char (%.3f bits) vs unigram entropy %.3f (%.3f bits)\n",
              held, held / std::log(2.0), unigram, unigram / std::log(2.0));

  // Decoding: the cache is sized by an init on a full-length input; each step feeds one token.
  Config dcfg = cfg;
  dcfg.decode = true;
  CharTransformer decoder(dcfg);
  Array one_pos = linum::broadcast_to(linum::arange(T, linum::int32), {1, T});
  const Tree cache0 =
      decoder.init(linum::random::PRNGKey(0), linum::zeros({1, T}, linum::int32), one_pos)["cache"];
  // The cached path equals the full causal pass on a prompt from the held-out text.
  auto [prompt, unused] = data.windows(1, T, true);
  Array full = model.apply(Tree{{"params", params}}, prompt, one_pos);
  Tree cache = cache0;
  double max_diff = 0;
  for (std::int64_t t = 0; t < T; ++t) {
    Array tok = linum::slice(prompt, {{}, {t, t + 1}});
    Array pos = linum::full({1, 1}, static_cast<double>(t), linum::int32);
    auto [logits, mut] = decoder.apply(Tree{{"params", params}, {"cache", cache}}, tok, pos,
                                       {.mutable_ = linum::lift::Filter{"cache"}});
    cache = mut["cache"];
    Array d = linum::max(linum::abs(logits - linum::slice(full, {{}, {t, t + 1}})));
    max_diff = std::max(max_diff, static_cast<double>(d.item<float>()));
  }
  std::printf("decode cache vs full causal pass: max |logit difference| %.2e over %lld steps\n",
              max_diff, static_cast<long long>(T));

  // Sampling (temperature 0.8) from a newline, up to the context length per chunk.
  std::string out;
  Array key = linum::random::PRNGKey(1);
  std::int32_t tok = data.id[static_cast<unsigned char>('\n')];
  cache = cache0;
  const auto s0 = std::chrono::steady_clock::now();
  for (std::int64_t i = 0; i < sample_len; ++i) {
    const std::int64_t t = i % T;
    if (t == 0) cache = cache0;  // a fresh context every T characters
    auto [logits, mut] = decoder.apply(Tree{{"params", params}, {"cache", cache}},
                                       linum::full({1, 1}, tok, linum::int32),
                                       linum::full({1, 1}, static_cast<double>(t), linum::int32),
                                       {.mutable_ = linum::lift::Filter{"cache"}});
    cache = mut["cache"];
    key = linum::random::fold_in(key, linum::Array(static_cast<std::int32_t>(i)));
    tok = linum::random::categorical(key, logits / 0.8f).reshape({1}).data<std::int32_t>()[0];
    out.push_back(data.chars[static_cast<std::size_t>(tok)]);
  }
  std::printf("sampled %lld chars in %.2f s:\n---\n%s\n---\n", static_cast<long long>(sample_len),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count(),
              out.c_str());
  return 0;
}
