#include "az_net.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "feature_memo.h"
#include "observation.h"
#include "per_thread.h"

namespace moonriver {

namespace {

constexpr int OPPONENTS = MAX_PLAYERS - 1;
constexpr int VIEWER_CHANNELS = 49;  // per cell: build 40, cowboy 4, drought 1, bonus 4
constexpr int REST_SIZE = OBSERVATION_SIZE - O_RESERVES;  // everything after the ranches

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

// The array ``name`` of ``arrays`` with ``shape`` (finite values), else std::invalid_argument.
const std::vector<float>& take(const std::map<std::string, NetArray>& arrays,
                               const std::string& name, const std::vector<std::size_t>& shape) {
  const auto it = arrays.find(name);
  if (it == arrays.end()) throw std::invalid_argument("network: no array " + name);
  const NetArray& a = it->second;
  if (a.shape != shape)
    throw std::invalid_argument("network: " + name + " has shape " + shape_text(a.shape) +
                                ", expected " + shape_text(shape));
  for (float v : a.data)
    if (!std::isfinite(v)) throw std::invalid_argument("network: " + name + " is not finite");
  return a.data;
}

// The leading size of ``name`` (its output count), else std::invalid_argument.
std::size_t outputs(const std::map<std::string, NetArray>& arrays, const std::string& name) {
  const auto it = arrays.find(name);
  if (it == arrays.end()) throw std::invalid_argument("network: no array " + name);
  if (it->second.shape.empty() || it->second.shape[0] == 0)
    throw std::invalid_argument("network: " + name + " has no outputs");
  return it->second.shape[0];
}

// ``w`` (out x in) stored input-major (in x out).
std::vector<float> transposed(const std::vector<float>& w, std::size_t out, std::size_t in) {
  std::vector<float> t(w.size());
  for (std::size_t o = 0; o < out; ++o)
    for (std::size_t i = 0; i < in; ++i) t[i * out + o] = w[o * in + i];
  return t;
}

// The helpers below are inlined into evaluate, so that each of its clones compiles them for its
// target.
#define NET_INLINE inline __attribute__((always_inline))

// Eight floats, one AVX register where the clone has them (GCC's vector extension: the same
// operations, in the same order, as eight scalars).
constexpr int LANES = 8;
typedef float Lanes __attribute__((vector_size(LANES * sizeof(float))));

// acc += x * row's eight floats (an unaligned load).
NET_INLINE void add_lanes(Lanes& acc, float x, const float* row) {
  Lanes r;
  std::memcpy(&r, row, sizeof r);
  acc += x * r;
}

// out[0..n) += x * row[0..n)
NET_INLINE void add_row(float* __restrict out, const float* __restrict row, float x, int n) {
  for (int k = 0; k < n; ++k) out[k] += x * row[k];
}

// add_row for a width known when compiled: whole registers, no loop bound read at run time.
template <int N>
NET_INLINE void add_row_fixed(float* out, const float* row, float x) {
  for (int q = 0; q < N; q += LANES) {
    Lanes o;
    std::memcpy(&o, out + q, sizeof o);
    add_lanes(o, x, row + q);
    std::memcpy(out + q, &o, sizeof o);
  }
}

// add_row, at the widths the shipped networks have (32 viewer, 16 opponent channels) with
// add_row_fixed: the same sums.
NET_INLINE void add_row_any(float* out, const float* row, float x, int n) {
  if (n == 32)
    add_row_fixed<32>(out, row, x);
  else if (n == 16)
    add_row_fixed<16>(out, row, x);
  else
    add_row(out, row, x, n);
}

NET_INLINE void relu(float* x, int n) {
  for (int k = 0; k < n; ++k) x[k] = std::max(x[k], 0.0f);
}

// A layer's non-zero inputs: their indices (minus ``base``: the row of the weights each reads)
// and values, in ascending order.
struct Inputs {
  const std::int32_t* index;
  const float* value;
  int count;
  int base = 0;
};

// y[start, start + 8 V) = b (none: 0) + sum_j value[j] * t[index[j] - base] (rows of t of n
// outputs), the inputs in their order, the sums kept in V registers.
template <int V>
NET_INLINE void linear_block(const Inputs& x, const float* t, int n, const float* b, int start,
                             float* y) {
  Lanes acc[V];
  if (b)
    std::memcpy(acc, b + start, sizeof acc);
  else
    for (int q = 0; q < V; ++q) acc[q] = Lanes{};
  for (int j = 0; j < x.count; ++j) {
    const float v = x.value[j];
    const float* row = t + static_cast<std::size_t>(x.index[j] - x.base) * n + start;
    for (int q = 0; q < V; ++q) add_lanes(acc[q], v, row + q * LANES);
  }
  std::memcpy(y + start, acc, sizeof acc);
}

// y = b (none: 0) + sum_j value[j] * t[index[j] - base] (rows of t of n outputs), each
// output's sum over the inputs in their order; the outputs 64, then 32, then 8 at a time, then
// one by one.
NET_INLINE void sparse_linear(const Inputs& x, const float* t, int n, const float* b, float* y) {
  int start = 0;
  for (; start + 64 <= n; start += 64) linear_block<8>(x, t, n, b, start, y);
  if (start + 32 <= n) {
    linear_block<4>(x, t, n, b, start, y);
    start += 32;
  }
  for (; start + LANES <= n; start += LANES) linear_block<1>(x, t, n, b, start, y);
  if (start == n) return;
  for (int k = start; k < n; ++k) y[k] = b ? b[k] : 0.0f;
  for (int j = 0; j < x.count; ++j)
    add_row(y + start, t + static_cast<std::size_t>(x.index[j] - x.base) * n + start, x.value[j],
            n - start);
}

// sparse_linear with the weights and biases as stored (n: the biases' count).
NET_INLINE void sparse_linear(const Inputs& x, const std::vector<float>& t,
                              const std::vector<float>& b, float* y) {
  sparse_linear(x, t.data(), static_cast<int>(b.size()), b.data(), y);
}

// relu(b + sum_i x[i] * t[i]) for N outputs known when compiled (a multiple of 8): the sums
// stay in registers (the shipped network's 32 viewer channels take this path; any other size
// the general one).
template <int N>
NET_INLINE void relu_linear_fixed(const float* x, int in, const float* t, const float* b,
                                  float* y) {
  constexpr int V = N / LANES;
  Lanes acc[V];
  std::memcpy(acc, b, sizeof acc);
  for (int i = 0; i < in; ++i)
    for (int q = 0; q < V; ++q) add_lanes(acc[q], x[i], t + i * N + q * LANES);
  for (int k = 0; k < N; ++k) y[k] = std::max(acc[k / LANES][k % LANES], 0.0f);
}

// The mean and maximum over the NUM_CELLS cells of ``x`` (cells x n), the cells in order.
NET_INLINE void pool(const float* x, int n, float* mean, float* high) {
  std::fill(mean, mean + n, 0.0f);
  std::fill(high, high + n, -INFINITY);
  for (int cell = 0; cell < NUM_CELLS; ++cell)
    for (int k = 0; k < n; ++k) {
      const float v = x[cell * n + k];
      mean[k] += v;
      high[k] = std::max(high[k], v);
    }
  for (int k = 0; k < n; ++k) mean[k] /= NUM_CELLS;
}

// A layer's variant adapter read from ``name``.down / .up / .bias (code x rank x inputs, code x
// outputs x rank, code x outputs), stored so that an input's and a rank's rows are contiguous.
AzNet::Adapter adapter(const std::map<std::string, NetArray>& a, const std::string& name,
                       std::size_t inputs, std::size_t outputs, std::size_t rank) {
  const std::size_t codes = NUM_VARIANT_CODES;
  const auto& down = take(a, name + ".down", {codes, rank, inputs});
  const auto& up = take(a, name + ".up", {codes, outputs, rank});
  AzNet::Adapter out;
  out.down.resize(down.size());
  out.up.resize(up.size());
  for (std::size_t v = 0; v < codes; ++v) {
    const std::size_t d = v * rank * inputs, u = v * outputs * rank;
    for (std::size_t r = 0; r < rank; ++r)
      for (std::size_t k = 0; k < inputs; ++k)
        out.down[d + k * rank + r] = down[d + r * inputs + k];
    for (std::size_t o = 0; o < outputs; ++o)
      for (std::size_t r = 0; r < rank; ++r) out.up[u + r * outputs + o] = up[u + o * rank + r];
  }
  out.bias = take(a, name + ".bias", {codes, outputs});
  out.active.resize(codes);
  const auto nonzero = [](const float* x, std::size_t n) {
    return std::any_of(x, x + n, [](float v) { return v != 0.0f; });
  };
  for (std::size_t v = 0; v < codes; ++v)  // a code whose up and bias are zero changes nothing
    out.active[v] = nonzero(out.up.data() + v * outputs * rank, outputs * rank) ||
                    nonzero(out.bias.data() + v * outputs, outputs);
  return out;
}

// Adds to ``out`` (``outputs`` values) each active code's adapter change, (up @ low + bias)
// times the code's weight; ``read_down(down, low)`` adds that code's down map (its rows,
// input-major) of the layer's input into ``low`` (``rank`` values, zero before).
template <class ReadDown>
void add_adapters(const AzNet::Adapter& adapter, const AzNet::VariantCodes& codes,
                  std::size_t inputs, int rank, int outputs, std::vector<float>& low, float* out,
                  ReadDown&& read_down) {
  const std::size_t r = static_cast<std::size_t>(rank), n = static_cast<std::size_t>(outputs);
  low.resize(r);
  for (int i = 0; i < codes.count; ++i) {
    const std::size_t code = static_cast<std::size_t>(codes.code[i]);
    if (!adapter.active[code]) continue;
    std::fill(low.begin(), low.end(), 0.0f);
    read_down(adapter.down.data() + code * inputs * r, low.data());
    const float* up = adapter.up.data() + code * n * r;  // rank x outputs
    for (int k = 0; k < rank; ++k)
      add_row(out, up + k * outputs, codes.weight[i] * low[k], outputs);
    add_row(out, adapter.bias.data() + code * n, codes.weight[i], outputs);
  }
}

}  // namespace

struct AzNet::Scratch {
  std::vector<float> conv, aside, rest, state, heads, value_hidden;  // aside: OPPONENTS slots
  std::vector<float> film;           // the variant film's scales and shifts
  std::vector<float> low, trunk_in;  // a variant adapter's down map's outputs, its input
  std::vector<std::int32_t> index, pooled_index;  // a layer's non-zero inputs (Inputs)
  std::vector<float> value, pooled_value;
};

namespace {

// Each thread's remembered ranch features: the viewer's, and the opponents'.
struct ViewerMemo : FeatureMemo {};
struct OpponentMemo : FeatureMemo {};

std::atomic<std::uint64_t> networks{0};  // AzNet ids, from 1

// The non-zero entries of ``x`` (``n`` floats) in ``s``'s lists from ``count`` on, indexed
// from ``offset``; returns the new count (the lists hold at least count + n).
int gather(AzNet::Scratch& s, const float* x, int n, int offset, int count) {
  if (s.index.size() < static_cast<std::size_t>(count + n)) {
    s.index.resize(count + n);
    s.value.resize(count + n);
  }
  return append_nonzeros(x, n, offset, s.index.data(), s.value.data(), count);
}

}  // namespace

AzNet::AzNet(const std::map<std::string, NetArray>& a, const std::vector<std::int64_t>& index)
    : id_(++networks) {
  const std::size_t c = outputs(a, "viewer_conv.weight"),
                    oc = outputs(a, "opponent_cells.0.weight");
  const std::size_t h = outputs(a, "rest.0.weight"), t = outputs(a, "trunk.0.weight");
  const std::size_t d = outputs(a, "dense_head.weight"), planes = NUM_RANCH_CHANNELS;
  constexpr std::size_t MAX_WIDTH = 4096;  // keeps every offset far inside an int
  static const char* const variant_arrays[] = {
      "variant_film.weight", "variant_rest.down", "variant_rest.up",   "variant_rest.bias",
      "variant_trunk.down",  "variant_trunk.up",  "variant_trunk.bias"};
  for (const auto& entry : a)  // a change the forward below would leave out: refused
    if (entry.first.rfind("variant_", 0) == 0 &&
        std::find(std::begin(variant_arrays), std::end(variant_arrays), entry.first) ==
            std::end(variant_arrays))
      throw std::invalid_argument("network: " + entry.first +
                                  " is not a variant layer the core evaluates");
  for (std::size_t size : {c, oc, h, t, d})
    if (size > MAX_WIDTH)
      throw std::invalid_argument("network: layers of at most " + std::to_string(MAX_WIDTH) +
                                  " outputs (got " + std::to_string(size) + ")");
  channels_ = static_cast<int>(c), opponent_channels_ = static_cast<int>(oc);
  rest_ = static_cast<int>(h), hidden_ = static_cast<int>(t), dense_ = static_cast<int>(d);
  conv_t_ = transposed(take(a, "viewer_conv.weight", {c, planes, 3, 3}), c, planes * 9);
  conv_b_ = take(a, "viewer_conv.bias", {c});
  cells_t_ = transposed(take(a, "viewer_cells.1.weight", {c, c}), c, c);
  cells_b_ = take(a, "viewer_cells.1.bias", {c});
  opp_t_ = transposed(take(a, "opponent_cells.0.weight", {oc, planes}), oc, planes);
  opp_b_ = take(a, "opponent_cells.0.bias", {oc});
  rest_t_ = transposed(take(a, "rest.0.weight", {h, REST_SIZE}), h, REST_SIZE);
  rest_b_ = take(a, "rest.0.bias", {h});
  const std::size_t pooled = 2 * c + 2 * OPPONENTS * oc;
  trunk_t_ = transposed(take(a, "trunk.0.weight", {t, h + pooled}), t, h + pooled);
  trunk_b_ = take(a, "trunk.0.bias", {t});
  const bool adapted = std::any_of(a.begin(), a.end(), [](const auto& entry) {
    return entry.first.rfind("variant_rest.", 0) == 0 ||
           entry.first.rfind("variant_trunk.", 0) == 0;
  });
  if (adapted) {                          // every one of the adapters' six arrays, one rank
    constexpr std::size_t MAX_RANK = 32;  // agents/pretrained.py's MAX_VARIANT_RANK
    const auto down = a.find("variant_rest.down");
    if (down == a.end()) throw std::invalid_argument("network: no array variant_rest.down");
    const std::size_t r = down->second.shape.size() == 3 ? down->second.shape[1] : 0;
    if (r < 1 || r > MAX_RANK)
      throw std::invalid_argument(
          "network: variant_rest.down has shape " + shape_text(down->second.shape) +
          ", expected (" + std::to_string(NUM_VARIANT_CODES) + ", rank 1 to " +
          std::to_string(MAX_RANK) + ", " + std::to_string(REST_SIZE) + ")");
    rank_ = static_cast<int>(r);
    rest_adapter_ = adapter(a, "variant_rest", REST_SIZE, h, r);
    trunk_adapter_ = adapter(a, "variant_trunk", h + pooled, t, r);
  }
  if (a.count("variant_film.weight"))  // stored code-major: a code's scales, then its shifts
    film_ = transposed(take(a, "variant_film.weight", {2 * t, NUM_VARIANT_CODES}), 2 * t,
                       NUM_VARIANT_CODES);
  std::vector<std::pair<const char*, std::size_t>> named_heads = {
      {"dense_head", d}, {"viewer_film", c}, {"thief_film", oc}};
  if (a.count("value_hidden.weight")) {
    const std::size_t vh = outputs(a, "value_hidden.weight"), in = REST_SIZE + h + pooled + t;
    if (vh > MAX_WIDTH)
      throw std::invalid_argument("network: layers of at most " + std::to_string(MAX_WIDTH) +
                                  " outputs (got " + std::to_string(vh) + ")");
    value_hidden_ = static_cast<int>(vh);
    value_hidden_t_ = transposed(take(a, "value_hidden.weight", {vh, in}), vh, in);
    value_hidden_b_ = take(a, "value_hidden.bias", {vh});
    value_head_ = take(a, "value_head.weight", {MAX_PLAYERS, vh});
    value_b_ = take(a, "value_head.bias", {MAX_PLAYERS});
  } else {  // a value per seat (the search recipe's), or one value (the PPO recipe's RanchNet)
    if (a.count("critic_hidden.weight"))
      throw std::invalid_argument("network: critic_hidden (a PPO value layer) is not evaluated");
    value_outputs_ = outputs(a, "value_head.weight") == 1 ? 1 : MAX_PLAYERS;
    named_heads.emplace_back("value_head", static_cast<std::size_t>(value_outputs_));
  }
  std::vector<float> heads;  // out x in, in the order the scores read them
  for (auto [name, rows] : named_heads) {
    const auto& w = take(a, std::string(name) + ".weight", {rows, t});
    const auto& b = take(a, std::string(name) + ".bias", {rows});
    heads.insert(heads.end(), w.begin(), w.end());
    heads_b_.insert(heads_b_.end(), b.begin(), b.end());
  }
  heads_t_ = transposed(heads, heads_b_.size(), t);
  viewer_head_ = take(a, "viewer_head.weight", {VIEWER_CHANNELS, c});
  viewer_b_ = take(a, "viewer_head.bias", {VIEWER_CHANNELS});
  thief_head_ = take(a, "thief_head.weight", {1, oc});
  thief_b_ = take(a, "thief_head.bias", {1});
  const auto prior = a.find("prior_weight");
  uses_prior_ = prior != a.end();
  if (uses_prior_) {
    if (prior->second.data.size() != 1 || !std::isfinite(prior->second.data[0]))
      throw std::invalid_argument("network: prior_weight must be one finite number");
    prior_weight_ = prior->second.data[0];
  }
  const std::size_t scores = d + static_cast<std::size_t>(VIEWER_CHANNELS + OPPONENTS) * NUM_CELLS;
  if (index.size() != NUM_ACTIONS || scores != NUM_ACTIONS)
    throw std::invalid_argument("network: the index must place the " + std::to_string(NUM_ACTIONS) +
                                " ids among as many scores (got " + std::to_string(index.size()) +
                                " ids, " + std::to_string(scores) + " scores)");
  std::vector<char> seen(NUM_ACTIONS, 0);
  for (std::int64_t pos : index) {
    if (pos < 0 || pos >= NUM_ACTIONS || seen[pos])
      throw std::invalid_argument("network: the index is not a permutation of the scores");
    seen[pos] = 1;
    index_.push_back(static_cast<std::int32_t>(pos));
  }
}

// Writes to ``part`` (the trunk's outputs, then the value layer's) what pooled values add: the
// ``n`` means read as the trunk's input from place ``means_at`` on, the ``n`` maxima from
// ``highs_at`` on.
NET_INLINE void AzNet::pooled_parts(const float* mean, const float* high, int n, int means_at,
                                    int highs_at, Scratch& s, float* part) const {
  s.pooled_index.resize(2 * static_cast<std::size_t>(n));
  s.pooled_value.resize(2 * static_cast<std::size_t>(n));
  int count = 0;
  for (int half = 0; half < 2; ++half)
    for (int k = 0; k < n; ++k) {
      const float x = (half ? high : mean)[k];
      s.pooled_index[count] = (half ? highs_at : means_at) + k;
      s.pooled_value[count] = x;
      count += x != 0.0f;
    }
  const Inputs inputs{s.pooled_index.data(), s.pooled_value.data(), count};
  sparse_linear(inputs, trunk_t_.data(), hidden_, nullptr, part);
  if (value_hidden_ > 0)  // the value layer reads the trunk's input after REST_SIZE values
    sparse_linear({inputs.index, inputs.value, count, -REST_SIZE}, value_hidden_t_.data(),
                  value_hidden_, nullptr, part + hidden_);
}

// The viewer's ranch (its ``count`` entries, indices from 0): its cells' features (NUM_CELLS x
// channels), their mean and maximum (channels each), then what those add to the trunk and the
// value layer, written to ``out``.
NET_INLINE void AzNet::viewer_features(const std::int32_t* index, const float* value, int count,
                                       Scratch& s, float* out) const {
  const int c = channels_;
  // A 3x3 convolution (zero padding), each non-zero input added to the up to 9 cells whose
  // patch holds it; ``touched``: the cells that got one.
  s.conv.resize(static_cast<std::size_t>(NUM_CELLS) * c);
  for (int cell = 0; cell < NUM_CELLS; ++cell)
    std::copy(conv_b_.begin(), conv_b_.end(), s.conv.begin() + cell * c);
  std::uint64_t touched = 0;
  for (int j = 0; j < count; ++j) {
    const int i = index[j];
    const float x = value[j];
    const int p = i / NUM_CELLS, r = i % NUM_CELLS / COLS, col = i % COLS;
    for (int dy = 0; dy < 3; ++dy) {
      const int rr = r - dy + 1;
      if (rr < 0 || rr >= MAX_ROWS) continue;
      for (int dx = 0; dx < 3; ++dx) {
        const int cc = col - dx + 1;
        if (cc < 0 || cc >= COLS) continue;
        add_row_any(s.conv.data() + (rr * COLS + cc) * c,
                    conv_t_.data() + ((p * 3 + dy) * 3 + dx) * c, x, c);
        touched |= std::uint64_t{1} << (rr * COLS + cc);
      }
    }
  }
  relu(s.conv.data(), NUM_CELLS * c);
  // A cell no input reached holds the bias alone: its output is computed once.
  int blank = -1;
  for (int cell = 0; cell < NUM_CELLS; ++cell) {
    float* v = out + cell * c;
    if (!(touched >> cell & 1) && blank >= 0) {
      std::copy(out + blank * c, out + (blank + 1) * c, v);
      continue;
    }
    if (c == 32) {
      relu_linear_fixed<32>(s.conv.data() + cell * c, c, cells_t_.data(), cells_b_.data(), v);
    } else {
      const int n = gather(s, s.conv.data() + cell * c, c, 0, 0);
      sparse_linear({s.index.data(), s.value.data(), n}, cells_t_, cells_b_, v);
      relu(v, c);
    }
    if (!(touched >> cell & 1)) blank = cell;
  }
  pool(out, c, out + NUM_CELLS * c, out + (NUM_CELLS + 1) * c);
  pooled_parts(out + NUM_CELLS * c, out + (NUM_CELLS + 1) * c, c, rest_, rest_ + c, s,
               out + (NUM_CELLS + 2) * c);
}

// An opponent's ranch (its ``count`` entries, indices from 0): one linear map per cell
// (NUM_CELLS x opponent channels), the cells' mean and maximum, then, for each place the
// opponent may sit at, what they add to the trunk and the value layer, written to ``out``.
NET_INLINE void AzNet::opponent_features(const std::int32_t* index, const float* value, int count,
                                         Scratch& s, float* out) const {
  const int oc = opponent_channels_;
  for (int cell = 0; cell < NUM_CELLS; ++cell)
    std::copy(opp_b_.begin(), opp_b_.end(), out + cell * oc);
  for (int j = 0; j < count; ++j) {
    const int p = index[j] / NUM_CELLS, cell = index[j] % NUM_CELLS;
    add_row_any(out + cell * oc, opp_t_.data() + p * oc, value[j], oc);
  }
  relu(out, NUM_CELLS * oc);
  float* mean = out + NUM_CELLS * oc;
  pool(out, oc, mean, mean + oc);
  float* parts = mean + 2 * oc;
  for (int o = 0; o < OPPONENTS; ++o) {  // the opponents' means, then their maxima
    const int first = rest_ + 2 * channels_ + o * oc;
    pooled_parts(mean, mean + oc, oc, first, first + OPPONENTS * oc, s,
                 parts + o * (hidden_ + value_hidden_));
  }
}

// Compiled twice, chosen when the module loads: for x86-64-v3 (AVX2, FMA) and for any x86-64
// (the linear maps' loops vectorize 8 floats wide on the first). Rounding may differ between
// the two clones (FMA), never between two calls on one machine.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
void AzNet::evaluate(const SparseObservation& obs, const float* prior, const std::int64_t* ids,
                     int m, int num_players, float* logits, float* shares) const {
  Scratch& s = per_thread<Scratch>();
  const int c = channels_, oc = opponent_channels_;
  // The observation's entries by part: the viewer's ranch, the opponents' ranches, the rest.
  const int ranches =
      static_cast<int>(std::lower_bound(obs.index, obs.index + obs.count, RANCH_SIZE) - obs.index);
  const int after = static_cast<int>(
      std::lower_bound(obs.index + ranches, obs.index + obs.count, O_RESERVES) - obs.index);
  // The viewer's ranch: its cells' features and what they add to the trunk and the value
  // layer, remembered by its entries.
  const int parts = hidden_ + value_hidden_;
  bool hit = false;
  FeatureMemo::Slot& seen = per_thread<ViewerMemo>().find(id_, obs.index, obs.value, ranches,
                                                          (NUM_CELLS + 2) * c + parts, &hit);
  if (!hit) {
    viewer_features(obs.index, obs.value, ranches, s, seen.features.data());
    FeatureMemo::keep(seen, id_, obs.index, obs.value, ranches);
  }
  const float* viewer = seen.features.data();
  const float* added[1 + OPPONENTS] = {viewer + (NUM_CELLS + 2) * c};
  // The opponents' ranches, each remembered by its entries (indices from its ranch's start);
  // a miss into a slot an earlier opponent of this leaf holds is computed aside, not kept.
  FeatureMemo& opponents = per_thread<OpponentMemo>();
  const int width = (NUM_CELLS + 2) * oc + OPPONENTS * parts;
  const float* others[OPPONENTS];
  const FeatureMemo::Slot* slots[OPPONENTS];
  s.aside.resize(static_cast<std::size_t>(OPPONENTS) * width);
  for (int o = 0, j = ranches; o < OPPONENTS; ++o) {
    const int base = (o + 1) * RANCH_SIZE;
    const int end = static_cast<int>(
        std::lower_bound(obs.index + j, obs.index + after, base + RANCH_SIZE) - obs.index);
    const int count = end - j;
    if (s.index.size() < static_cast<std::size_t>(count)) {
      s.index.resize(count);
      s.value.resize(count);
    }
    for (int k = 0; k < count; ++k) s.index[k] = obs.index[j + k] - base;
    const float* value = obs.value + j;
    FeatureMemo::Slot& other = opponents.find(id_, s.index.data(), value, count, width, &hit);
    float* features = other.features.data();
    if (!hit) {
      const bool held = std::find(slots, slots + o, &other) != slots + o;
      if (held) features = s.aside.data() + o * width;
      opponent_features(s.index.data(), value, count, s, features);
      if (!held) FeatureMemo::keep(other, id_, s.index.data(), value, count);
    }
    slots[o] = &other;
    others[o] = features;
    added[1 + o] = features + (NUM_CELLS + 2) * oc + o * parts;
    j = end;
  }
  // The rest of the observation, then the trunk: its input's rest part, plus what the ranches
  // add.
  s.rest.resize(static_cast<std::size_t>(rest_));
  float* rest = s.rest.data();
  const Inputs observed_rest{obs.index + after, obs.value + after, obs.count - after, O_RESERVES};
  sparse_linear(observed_rest, rest_t_, rest_b_, rest);
  VariantCodes codes;
  if (rank_ > 0 || !film_.empty()) codes = variant_codes(obs);
  if (rank_ > 0) adapt_rest(obs, after, codes, s, rest);
  relu(rest, rest_);
  s.state.resize(static_cast<std::size_t>(hidden_));
  const int rest_inputs = gather(s, rest, rest_, 0, 0);
  sparse_linear({s.index.data(), s.value.data(), rest_inputs}, trunk_t_, trunk_b_, s.state.data());
  for (const float* part : added) add_row(s.state.data(), part, 1.0f, hidden_);
  if (rank_ > 0) adapt_trunk(rest, viewer, others, codes, s, s.state.data());
  if (!film_.empty()) variant_film(codes, s, s.state.data());
  relu(s.state.data(), hidden_);
  s.heads.resize(heads_b_.size());
  const int state_count = gather(s, s.state.data(), hidden_, 0, 0);
  sparse_linear({s.index.data(), s.value.data(), state_count}, heads_t_, heads_b_, s.heads.data());
  const float* film = s.heads.data() + dense_;
  const float* thief_film = film + c;
  const float* value = thief_film + oc;
  float own_value[MAX_PLAYERS];
  if (value_hidden_ > 0) {  // the value's own layer: the observation after the ranches, the
    const int rest_count = obs.count - after;  // trunk's input, its state: in that order
    if (s.index.size() < static_cast<std::size_t>(rest_count)) {
      s.index.resize(rest_count);
      s.value.resize(rest_count);
    }
    for (int j = 0; j < rest_count; ++j) {
      s.index[j] = obs.index[after + j] - O_RESERVES;
      s.value[j] = obs.value[after + j];
    }
    const int trunk_in = rest_ + 2 * c + 2 * OPPONENTS * oc;
    int count = gather(s, rest, rest_, REST_SIZE, rest_count);
    count = gather(s, s.state.data(), hidden_, REST_SIZE + trunk_in, count);
    s.value_hidden.resize(static_cast<std::size_t>(value_hidden_));
    sparse_linear({s.index.data(), s.value.data(), count}, value_hidden_t_, value_hidden_b_,
                  s.value_hidden.data());
    for (const float* part : added)
      add_row(s.value_hidden.data(), part + hidden_, 1.0f, value_hidden_);
    relu(s.value_hidden.data(), value_hidden_);
    for (int k = 0; k < MAX_PLAYERS; ++k) {
      float sum = value_b_[k];
      const float* w = value_head_.data() + static_cast<std::size_t>(k) * value_hidden_;
      for (int j = 0; j < value_hidden_; ++j) sum += w[j] * s.value_hidden[j];
      own_value[k] = sum;
    }
    value = own_value;
  }
  // The policy at the legal ids: a dense score, a viewer cell's channel or an opponent's cell.
  for (int i = 0; i < m; ++i) {
    const std::int32_t pos = index_[ids[i]];
    float score;
    if (pos < dense_) {
      score = s.heads[pos];
    } else if (pos < dense_ + VIEWER_CHANNELS * NUM_CELLS) {
      const int q = pos - dense_, cell = q / VIEWER_CHANNELS, ch = q % VIEWER_CHANNELS;
      const float* v = viewer + cell * c;
      const float* w = viewer_head_.data() + ch * c;
      score = viewer_b_[ch];
      for (int k = 0; k < c; ++k) score += std::max(v[k] + film[k], 0.0f) * w[k];
    } else {
      const int q = pos - dense_ - VIEWER_CHANNELS * NUM_CELLS;
      const float* v = others[q / NUM_CELLS] + q % NUM_CELLS * oc;  // q: opponent x cells + cell
      score = thief_b_[0];
      for (int k = 0; k < oc; ++k) score += std::max(v[k] + thief_film[k], 0.0f) * thief_head_[k];
    }
    if (uses_prior_) score += prior_weight_ * prior[i];
    logits[i] = score;
  }
  if (value_outputs_ == 1) {  // the one value as it is
    std::fill(shares, shares + MAX_PLAYERS, 0.0f);
    shares[0] = value[0];
    return;
  }
  // The value: a softmax over the seats at the table.
  float hi = value[0];
  for (int k = 1; k < num_players; ++k) hi = std::max(hi, value[k]);
  double sum = 0.0, e[MAX_PLAYERS] = {};
  for (int k = 0; k < num_players; ++k) sum += e[k] = std::exp(static_cast<double>(value[k] - hi));
  for (int k = 0; k < MAX_PLAYERS; ++k)
    shares[k] = k < num_players ? static_cast<float>(e[k] / sum) : 0.0f;
}

// The variant codes the observation's players and mode one-hots name: each pair of non-zero
// entries, weighted by their product (a true observation: one code, weight 1).
AzNet::VariantCodes AzNet::variant_codes(const SparseObservation& obs) {
  VariantCodes codes;
  const int first = static_cast<int>(
      std::lower_bound(obs.index, obs.index + obs.count, O_PLAYERS_ONEHOT) - obs.index);
  for (int i = first; i < obs.count && obs.index[i] < O_MODE_ONEHOT; ++i)
    for (int j = i + 1; j < obs.count; ++j) {
      if (obs.index[j] < O_MODE_ONEHOT) continue;
      codes.code[codes.count] =
          (obs.index[i] - O_PLAYERS_ONEHOT) * NUM_MODE_CODES + obs.index[j] - O_MODE_ONEHOT;
      codes.weight[codes.count++] = obs.value[i] * obs.value[j];
    }
  return codes;
}

// The trunk's pre-activations ``state`` scaled by 1 + and shifted by the codes' films.
void AzNet::variant_film(const VariantCodes& codes, Scratch& s, float* state) const {
  s.film.assign(2 * static_cast<std::size_t>(hidden_), 0.0f);
  float* scale = s.film.data();
  float* shift = scale + hidden_;
  for (int i = 0; i < codes.count; ++i) {
    const float* film = film_.data() + static_cast<std::size_t>(codes.code[i]) * 2 * hidden_;
    add_row(scale, film, codes.weight[i], hidden_);
    add_row(shift, film + hidden_, codes.weight[i], hidden_);
  }
  for (int k = 0; k < hidden_; ++k) state[k] = state[k] * (1.0f + scale[k]) + shift[k];
}

// Adds the codes' rest adapters to the rest layer's pre-activations ``rest`` (its input: the
// observation's entries from ``after`` on).
void AzNet::adapt_rest(const SparseObservation& obs, int after, const VariantCodes& codes,
                       Scratch& s, float* rest) const {
  add_adapters(rest_adapter_, codes, REST_SIZE, rank_, rest_, s.low, rest,
               [&](const float* down, float* low) {
                 for (int j = after; j < obs.count; ++j)  // each entry: a row of rank values
                   add_row(low, down + static_cast<std::size_t>(obs.index[j] - O_RESERVES) * rank_,
                           obs.value[j], rank_);
               });
}

// Adds the codes' trunk adapters to the trunk's pre-activations ``state`` (its input: ``rest``
// after ReLU and the ranches' pooled features, remembered with their cells' features).
void AzNet::adapt_trunk(const float* rest, const float* viewer, const float* const* others,
                        const VariantCodes& codes, Scratch& s, float* state) const {
  bool active = false;
  for (int i = 0; i < codes.count; ++i) active = active || trunk_adapter_.active[codes.code[i]];
  if (!active) return;
  // The trunk's input as torch lays it out: the rest, the viewer's cells' mean and maximum,
  // the opponents' means, then their maxima.
  const int c = channels_, oc = opponent_channels_;
  const int inputs = rest_ + 2 * c + 2 * OPPONENTS * oc;
  s.trunk_in.resize(static_cast<std::size_t>(inputs));
  float* in = s.trunk_in.data();
  std::copy(rest, rest + rest_, in);
  std::copy(viewer + NUM_CELLS * c, viewer + (NUM_CELLS + 2) * c, in + rest_);
  for (int o = 0; o < OPPONENTS; ++o) {
    const float* pooled = others[o] + NUM_CELLS * oc;  // mean, then maximum
    std::copy(pooled, pooled + oc, in + rest_ + 2 * c + o * oc);
    std::copy(pooled + oc, pooled + 2 * oc, in + rest_ + 2 * c + (OPPONENTS + o) * oc);
  }
  add_adapters(trunk_adapter_, codes, static_cast<std::size_t>(inputs), rank_, hidden_, s.low,
               state, [&](const float* down, float* low) {
                 for (int j = 0; j < inputs; ++j)
                   if (in[j] != 0.0f)
                     add_row(low, down + static_cast<std::size_t>(j) * rank_, in[j], rank_);
               });
}

void AzNet::evaluate_dense(const float* observation, const float* prior, const std::int64_t* ids,
                           int m, int num_players, float* logits, float* shares) const {
  static thread_local SparseObservation sparse;
  static thread_local float at_ids[NUM_ACTIONS];
  sparse.count = append_nonzeros(observation, OBSERVATION_SIZE, 0, sparse.index, sparse.value, 0);
  if (uses_prior_)
    for (int i = 0; i < m; ++i) at_ids[i] = prior[ids[i]];
  evaluate(sparse, at_ids, ids, m, num_players, logits, shares);
}

}  // namespace moonriver
