// Character-level data for the language-model examples: a text file as ids over its sorted
// characters, the last 10% held out, the unigram entropy of the training part, and random
// windows of (input, next character) pairs.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <linum/linum.hpp>

namespace linum::examples {

struct CharData {
  std::string chars;          // the vocabulary, sorted
  std::array<int, 256> id{};  // byte -> id (-1: absent)
  std::vector<std::int32_t> ids;
  std::size_t split = 0;  // ids[split:] is held out
  double unigram = 0;     // entropy of the training characters, nats/char
  std::mt19937_64 rng{0};

  explicit CharData(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw ValueError("cannot read " + path);
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string text = ss.str();
    if (text.size() < 1000) throw ValueError(path + ": the text is too short to train on");
    id.fill(-1);
    for (unsigned char ch : text)
      if (id[ch] < 0) id[ch] = 0, chars.push_back(static_cast<char>(ch));
    std::sort(chars.begin(), chars.end());
    for (std::size_t i = 0; i < chars.size(); ++i)
      id[static_cast<unsigned char>(chars[i])] = int(i);
    for (unsigned char ch : text) ids.push_back(id[ch]);
    split = ids.size() * 9 / 10;
    std::vector<double> counts(chars.size(), 0.0);
    for (std::size_t i = 0; i < split; ++i) counts[ids[i]] += 1;
    for (double n : counts)
      if (n > 0) unigram -= n / split * std::log(n / split);
  }
  std::int64_t vocab() const { return static_cast<std::int64_t>(chars.size()); }

  // b windows of length t from the training (held_out=false) or held-out part: (x, y) with
  // y[i, s] the character after x[i, s].
  std::pair<Array, Array> windows(std::int64_t b, std::int64_t t, bool held_out = false) {
    const std::size_t lo = held_out ? split : 0, hi = held_out ? ids.size() : split;
    std::uniform_int_distribution<std::size_t> pick(lo, hi - static_cast<std::size_t>(t) - 1);
    std::vector<std::int32_t> x(static_cast<std::size_t>(b * t)), y(x.size());
    for (std::int64_t i = 0; i < b; ++i) {
      const std::size_t s = pick(rng);
      for (std::int64_t k = 0; k < t; ++k) {
        x[i * t + k] = ids[s + k];
        y[i * t + k] = ids[s + k + 1];
      }
    }
    return {array(x, {b, t}), array(y, {b, t})};
  }
};

}  // namespace linum::examples
