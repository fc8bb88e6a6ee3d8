// The search recipe's network (RanchNet's trunk and policy with a value per seat,
// moonriver_env/agents/az.py's NumpyAZNet) evaluated in C++, one state at a time: the inputs
// are sparse (a few hundred of the 4934 values are not zero, read as the list observe_sparse
// writes), so the first layers add a weight row per non-zero input, and the policy is
// computed at the legal ids only. A ranch's per-cell features are remembered per thread by the
// ranch's exact inputs (feature_memo.h): most leaves of a search share their ranches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "actions.h"
#include "observation.h"

namespace moonriver {

// A float32 array and its shape (C order), as read from the network's file.
struct NetArray {
  std::vector<float> data;
  std::vector<std::size_t> shape;
};

class AzNet {
 public:
  // ``arrays``: the state dict's arrays by name (``viewer_conv.weight``, ... ``value_head.bias``,
  // optional ``prior_weight`` and optional ``value_hidden.weight`` / ``.bias``: then the value
  // head reads that layer over the observation after the ranches, the trunk's input and its state
  // instead of the state; optional ``variant_film.weight``, (2 x trunk) x NUM_VARIANT_CODES: the
  // trunk's pre-activations times 1 + its first half and plus its second, read at the product of
  // the players and mode one-hots; optional ``variant_rest`` and ``variant_trunk`` adapters'
  // ``.down`` (15 x rank x inputs), ``.up`` (15 x outputs x rank) and ``.bias`` (15 x outputs):
  // each layer's pre-activations plus up @ (down @ input) + bias at that code); ``index``: each
  // action id's place in the concatenated (dense, viewer cells, thief) scores (agents/pretrained.py
  // action_index). A missing array, a shape that does not fit or a value that is not finite:
  // std::invalid_argument.
  AzNet(const std::map<std::string, NetArray>& arrays, const std::vector<std::int64_t>& index);

  // Each thread's work space (az_net.cc).
  struct Scratch;
  // A layer's variant adapter, stored input-major: down (code x inputs x rank), up (code x rank
  // x outputs), bias (code x outputs); active: whether a code's change is not zero.
  struct Adapter {
    std::vector<float> down, up, bias;
    std::vector<char> active;
  };
  // The variant codes an observation's one-hots name (one for a true observation) and weights.
  struct VariantCodes {
    int count = 0;
    int code[NUM_VARIANT_CODES];
    float weight[NUM_VARIANT_CODES];
  };

  bool uses_prior() const { return uses_prior_; }
  // Whether the value head has one output (a PPO RanchNet's) rather than one per seat.
  bool one_value() const { return value_outputs_ == 1; }
  // The logits at the ``m`` legal ``ids`` of a state seen by its player to move
  // (``observation``: its non-zero values, observe_sparse; ``prior``: its greedy prior at the
  // ``m`` ids, read when uses_prior) and the win shares by seat relative to that player
  // (``shares``: MAX_PLAYERS values, zero from ``num_players`` on, summing to 1); a network
  // whose ``value_head`` has one output (a PPO RanchNet's, no value layer of its own) writes
  // that value to shares[0] and zeros after it.
  void evaluate(const SparseObservation& observation, const float* prior, const std::int64_t* ids,
                int m, int num_players, float* logits, float* shares) const;
  // The same from the dense observation (OBSERVATION_SIZE values) and prior row (NUM_ACTIONS
  // values): the same results.
  void evaluate_dense(const float* observation, const float* prior, const std::int64_t* ids, int m,
                      int num_players, float* logits, float* shares) const;

 private:
  void viewer_features(const std::int32_t* index, const float* value, int count, Scratch& s,
                       float* out) const;
  void opponent_features(const std::int32_t* index, const float* value, int count, Scratch& s,
                         float* out) const;
  static VariantCodes variant_codes(const SparseObservation& observation);
  void variant_film(const VariantCodes& codes, Scratch& s, float* state) const;
  void adapt_rest(const SparseObservation& observation, int after, const VariantCodes& codes,
                  Scratch& s, float* rest) const;
  void adapt_trunk(const float* rest, const float* viewer, const float* const* others,
                   const VariantCodes& codes, Scratch& s, float* state) const;
  void pooled_parts(const float* mean, const float* high, int n, int means_at, int highs_at,
                    Scratch& s, float* part) const;

  std::uint64_t id_;  // this network among those made (the ranch features remembered by it)
  int channels_ = 0, opponent_channels_ = 0, rest_ = 0, hidden_ = 0, dense_ = 0;
  int value_hidden_ = 0;             // 0: the value head is one of the heads read from the state
  int value_outputs_ = MAX_PLAYERS;  // 1: one value read from the state (a PPO RanchNet's)
  bool uses_prior_ = false;
  float prior_weight_ = 0.0f;
  // Weights stored input-major (in x out), so an input's row is contiguous; biases as given.
  std::vector<float> conv_t_, conv_b_;  // (planes x 3 x 3) x channels
  std::vector<float> cells_t_, cells_b_;
  std::vector<float> opp_t_, opp_b_;
  std::vector<float> rest_t_, rest_b_;
  std::vector<float> trunk_t_, trunk_b_;
  std::vector<float> film_;  // NUM_VARIANT_CODES x (scale, shift) x trunk; empty: no film
  int rank_ = 0;             // the variant adapters' rank (0: none)
  Adapter rest_adapter_, trunk_adapter_;
  std::vector<float> heads_t_, heads_b_;  // dense, viewer film, thief film[, value]
  std::vector<float> value_hidden_t_,
      value_hidden_b_;                         // (rest + trunk input + state) x value_hidden
  std::vector<float> value_head_, value_b_;    // MAX_PLAYERS x value_hidden, with value_hidden
  std::vector<float> viewer_head_, viewer_b_;  // out x in (a legal id reads one output's row)
  std::vector<float> thief_head_, thief_b_;
  std::vector<std::int32_t> index_;
};

}  // namespace moonriver
