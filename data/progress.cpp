// The progress line: formatting on demand, printing throttled by the interval.
#include <linum/data/progress.hpp>

#include <unistd.h>

#include <chrono>
#include <cmath>

#include <linum/error.hpp>

namespace linum::data {
namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// "0:07", "12:34", "1:02:03".
std::string clock_time(double secs) {
  if (!std::isfinite(secs) || secs < 0) return "?";
  const auto s = static_cast<long long>(std::llround(secs));
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  return buf;
}

}  // namespace

Progress::Progress(std::int64_t total_steps, ProgressOptions options)
    : total_(total_steps), o_(std::move(options)) {
  if (o_.smoothing && !(*o_.smoothing >= 0 && *o_.smoothing < 1))
    throw ValueError("Progress: smoothing must be in [0, 1), got " + std::to_string(*o_.smoothing));
  tty_ = o_.tty.value_or(o_.out && isatty(fileno(o_.out)));
  interval_ = o_.interval.value_or(tty_ ? 0.1 : 5.0);
  start_ = last_print_ = now();
}

Progress::~Progress() { close(); }

double Progress::now() const {
  if (o_.clock) return o_.clock();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double Progress::elapsed() const { return (closed_ ? end_ : now()) - start_; }

double Progress::mean_loss() const {
  if (steps_ == 0) return NAN;
  return o_.smoothing ? average_ : loss_sum_ / weight_sum_;
}

void Progress::update(double loss, std::int64_t examples) {
  if (closed_) return;
  ++steps_;
  examples_ += examples;
  const double w = examples > 0 ? static_cast<double>(examples) : 1.0;
  loss_sum_ += w * loss;
  weight_sum_ += w;
  const double keep = o_.smoothing.value_or(0);
  average_ = steps_ == 1 ? loss : keep * average_ + (1 - keep) * loss;
  // The last step's line is close()'s.
  if (o_.out && steps_ != total_ && now() - last_print_ >= interval_) print(false);
}

void Progress::close() {
  if (closed_) return;
  end_ = now();
  closed_ = true;
  if (o_.out) print(true);
}

std::string Progress::line() const {
  std::string s = o_.desc.empty() ? "" : o_.desc + "  ";
  if (tty_ && total_ > 0) {  // a bar, on a terminal only: logs keep the numbers
    constexpr int kWidth = 20;
    const auto done = static_cast<int>(kWidth * std::min(steps_, total_) / total_);
    s += '[';
    s.append(done, '=');
    s.append(kWidth - done, ' ');
    s += "] ";
  }
  s += std::to_string(steps_);
  if (total_ > 0) (s += '/') += std::to_string(total_);
  if (steps_ > 0) (s += "  loss ") += fixed(mean_loss(), 4);
  const double secs = elapsed();
  if (secs > 0 && steps_ > 0) {
    s += "  " + fixed(steps_ / secs, 1) + " steps/s";
    if (examples_ > 0) s += "  " + fixed(examples_ / secs, 0) + " examples/s";
  }
  if (!postfix_.empty()) (s += "  ") += postfix_;
  if (closed_)
    s += "  " + fixed(secs, 1) + " s";
  else if (total_ > 0 && steps_ > 0 && secs > 0)
    s += "  ETA " + clock_time(static_cast<double>(std::max<std::int64_t>(total_ - steps_, 0)) *
                               secs / static_cast<double>(steps_));
  return s;
}

void Progress::print(bool final) {
  last_print_ = now();
  const std::string text = line();
  if (tty_) {
    // Spaces over what a longer previous line left behind.
    const std::size_t pad = last_width_ > text.size() ? last_width_ - text.size() : 0;
    std::fprintf(o_.out, "\r%s%s%s", text.c_str(), std::string(pad, ' ').c_str(),
                 final ? "\n" : "");
    last_width_ = text.size();
  } else {
    std::fprintf(o_.out, "%s\n", text.c_str());
  }
  std::fflush(o_.out);
}

}  // namespace linum::data
