// A training loop's progress line: steps done of the total, the running (mean) loss, steps/s,
// examples/s and the time left, redrawn in place on a terminal ('\r') and printed as plain lines
// every few seconds otherwise (logs, CI), with a final line when the loop closes it:
//
//   data::Progress progress(ds.cardinality(), {.desc = "epoch " + std::to_string(epoch)});
//   for (auto [x, y] : ds) { ...; progress.update(loss.item<double>(), x.shape(0)); }
//   progress.close();  // "epoch 1  469/469  loss 0.4213  41.0 steps/s  5248 examples/s  11.4 s"
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <utility>

namespace linum::data {

struct ProgressOptions {
  std::string desc{};       // the line's prefix, e.g. "epoch 3"
  std::FILE* out = stdout;  // nullptr: silent (every process but the one that reports)
  // Redraw one line with '\r'; by default, whether `out` is a terminal.
  std::optional<bool> tty{};
  // Seconds between lines: by default 0.1 on a terminal, 5 otherwise.
  std::optional<double> interval{};
  // The running loss: the mean over the steps so far (Keras's epoch mean) by default; with a
  // smoothing s in [0, 1), an exponential moving average, s * previous + (1 - s) * loss, for
  // long runs where the early losses would dominate a mean.
  std::optional<double> smoothing{};
  // Seconds on a monotonic clock; by default std::chrono::steady_clock (tests inject their own).
  std::function<double()> clock{};
};

class Progress {
 public:
  // total_steps <= 0: unknown (no ETA).
  explicit Progress(std::int64_t total_steps, ProgressOptions options = {});
  ~Progress();  // close()
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // One step done with this loss; `examples` (the batch size) weights the running loss and
  // gives examples/s. Prints when the interval has passed since the last line.
  void update(double loss, std::int64_t examples = 0);
  // Text shown at the end of the line, e.g. "lr 3.0e-03" (tqdm's set_postfix).
  void set_postfix(std::string text) { postfix_ = std::move(text); }
  // Prints the final line (with the elapsed time instead of the ETA); later calls do nothing.
  void close();

  // The line as it would print now.
  std::string line() const;
  std::int64_t steps() const { return steps_; }
  double mean_loss() const;  // the running loss (see ProgressOptions::smoothing)
  double elapsed() const;    // seconds since construction (until close)

 private:
  void print(bool final);
  double now() const;

  std::int64_t total_, steps_ = 0, examples_ = 0;
  double loss_sum_ = 0, weight_sum_ = 0, average_ = 0;
  std::string postfix_;
  ProgressOptions o_;
  bool tty_ = false, closed_ = false;
  double interval_, start_, last_print_, end_ = 0;
  std::size_t last_width_ = 0;
};

}  // namespace linum::data
