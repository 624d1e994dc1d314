#include "attn/analysis/attention_flow.h"

#include "../core/try.h"

// push_relabel_max_flow ends with BOOST_ASSERT(is_flow()), which compares sums of residual capacities for exact
// equality: true in exact arithmetic, not always in floating point, and a second pass over every edge. The max-flow
// value is the preflow's, computed before that check; the tests compare it with networkx.
#define BOOST_DISABLE_ASSERTS
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <boost/property_map/property_map.hpp>
#undef BOOST_DISABLE_ASSERTS

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attn::analysis {

namespace {

// Compressed sparse rows: the edges of a vertex are contiguous, indexed by position (the capacities, residuals
// and reverse edges are plain vectors); adjacency_list would allocate every edge's properties on their own. About
// 100 bytes an edge with its reverse and two threads' capacities and residuals: 380 MB peak at 512 tokens x 12
// layers of dense attention (2.6 million edges after pruning; /usr/bin/time's maximum resident size).
using FlowGraph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, boost::no_property,
                                                     boost::no_property, std::uint32_t, std::uint32_t>;
using Vertex = FlowGraph::vertex_descriptor;
using Edge = FlowGraph::edge_descriptor;

// Nanoseconds of one thread per edge of the pruned graph and per source. Measured on GPT-2 small's shape (12 layers,
// random softmax rows, target the last token; a Release build, 2 threads under nice -n 19 on a shared 2-core
// machine, two runs at different loads): 128 tokens 0.22-0.30 s causal / 0.29-0.63 s not, 256: 1.7-2.6 s /
// 2.0-3.1 s, 512: 10.1-19.4 s / 14.8-22.0 s, i.e. 22 to 63 ns; the estimate takes the slow end. Causal inputs cost
// more per edge: each max-flow starts over the whole graph, most of it out of the source's reach.
constexpr double kNanosPerEdgeSource = 60.0;

std::string layer_name(std::size_t l) { return "layer " + std::to_string(l + 1); }

// Layers square, all one size, within the bound, each weight finite and >= 0.
Result<Index> check_layers(const std::vector<Matrix>& layers, int first_layer, const char* what) {
  if (layers.empty()) return fail(ErrorKind::Mismatch, std::string(what) + ": no layers");
  const Index n = layers.front().rows();
  long long nonzero = 0;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const Matrix& a = layers[l];
    if (a.rows() != a.cols()) {
      return fail(ErrorKind::Mismatch, std::string(what) + ": " +
                                           layer_name(l + static_cast<std::size_t>(first_layer)) + " is " +
                                           std::to_string(a.rows()) + " x " + std::to_string(a.cols()) +
                                           "; attention flow needs self-attention (square maps)");
    }
    if (a.rows() != n) {
      return fail(ErrorKind::Mismatch,
                  std::string(what) + ": " + layer_name(l + static_cast<std::size_t>(first_layer)) + " has " +
                      std::to_string(a.rows()) + " tokens where " + layer_name(static_cast<std::size_t>(first_layer)) +
                      " has " + std::to_string(n));
    }
    if (n == 0) return fail(ErrorKind::Mismatch, std::string(what) + ": the layers have no tokens");
    nonzero += (a.array() != 0.0f).count() + (a.diagonal().array() == 0.0f).count();  // the residual's diagonal
  }
  if (n > kFlowMaxTokens) {
    const double seconds = flow_seconds_estimate(nonzero, n);
    const auto minutes = static_cast<long long>(std::ceil(seconds / 60.0));
    return fail(ErrorKind::TooLarge, std::string(what) + ": " + with_commas(n) + " tokens; attention flow runs one " +
                                         "max-flow per input token over a graph of up to " + with_commas(nonzero) +
                                         " edges, about " + with_commas(minutes) + " minute" +
                                         (minutes == 1 ? "" : "s") + " on two threads; it is computed up to " +
                                         with_commas(kFlowMaxTokens) + " tokens");
  }
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const Matrix& a = layers[l];
    for (Index i = 0; i < n; ++i) {
      for (Index j = 0; j < n; ++j) {
        const float w = a(i, j);
        if (!(std::isfinite(w) && w >= 0.0f)) {
          return fail(ErrorKind::OutOfRange, std::string(what) + ": " +
                                                 layer_name(l + static_cast<std::size_t>(first_layer)) + ", query " +
                                                 std::to_string(i) + ", key " + std::to_string(j) + " has weight " +
                                                 std::to_string(w) + "; flow capacities must be finite and >= 0");
        }
      }
    }
  }
  return n;
}

// The flow network of A'_0..A'_{L-1} towards (L, target), pruned to the nodes that reach the sink. Layer 0 is one
// node, `source`, whose edges to layer 1 get input token j's capacities A'_0[i][j] before each max-flow: the other
// inputs' nodes carry nothing from j, so no source needs them.
struct FlowNetwork {
  FlowGraph graph;
  std::vector<double> capacity;            // by edge index; a reverse edge's is 0
  std::vector<Edge> reverse;               // by edge index
  std::vector<std::uint32_t> from_source;  // edge index of source -> (1, i), by i; unused where (1, i) is pruned
  std::vector<std::uint8_t> reaches;       // (1, i) reaches the sink
  Vertex source = 0, sink = 0;
  long long edges = 0;  // without the reverse edges
};

FlowNetwork build_network(const std::vector<Matrix>& a, Index target) {
  const auto layers = a.size();
  const Index n = a.front().rows();
  // id[l][i]: the vertex of (l, i) for l = 1..L, or -1 where (l, i) cannot reach (L, target).
  std::vector<std::vector<std::int64_t>> id(layers + 1, std::vector<std::int64_t>(static_cast<std::size_t>(n), -1));
  std::int64_t next = 1;  // 0: the source
  id[layers][static_cast<std::size_t>(target)] = next++;
  for (std::size_t l = layers - 1; l >= 1; --l) {
    for (Index j = 0; j < n; ++j) {
      for (Index i = 0; i < n; ++i) {
        if (id[l + 1][static_cast<std::size_t>(i)] >= 0 && a[l](i, j) > 0.0f) {
          id[l][static_cast<std::size_t>(j)] = next++;
          break;
        }
      }
    }
  }
  struct Arc {
    std::uint32_t from, to;
    double capacity;
  };
  std::vector<Arc> forward;
  for (Index i = 0; i < n; ++i) {
    if (id[1][static_cast<std::size_t>(i)] >= 0) forward.push_back({0, std::uint32_t(id[1][std::size_t(i)]), 0.0});
  }
  for (std::size_t l = 1; l < layers; ++l) {
    for (Index i = 0; i < n; ++i) {
      const std::int64_t to = id[l + 1][static_cast<std::size_t>(i)];
      if (to < 0) continue;
      for (Index j = 0; j < n; ++j) {
        const std::int64_t from = id[l][static_cast<std::size_t>(j)];
        if (from >= 0 && a[l](i, j) > 0.0f) forward.push_back({std::uint32_t(from), std::uint32_t(to), a[l](i, j)});
      }
    }
  }
  // Arc 2f is forward edge f, arc 2f + 1 its reverse; counted into place by their tail (CSR order).
  const auto vertices = static_cast<std::size_t>(next);
  std::vector<std::size_t> start(vertices + 1, 0);
  for (const Arc& f : forward) {
    ++start[f.from + 1];
    ++start[f.to + 1];
  }
  for (std::size_t v = 0; v < vertices; ++v) start[v + 1] += start[v];
  const std::size_t arcs = 2 * forward.size();
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ends(arcs);
  std::vector<std::size_t> place(arcs);
  for (std::size_t f = 0; f < forward.size(); ++f) {
    place[2 * f] = start[forward[f].from]++;
    place[2 * f + 1] = start[forward[f].to]++;
    ends[place[2 * f]] = {forward[f].from, forward[f].to};
    ends[place[2 * f + 1]] = {forward[f].to, forward[f].from};
  }
  FlowNetwork net{FlowGraph(boost::edges_are_sorted, ends.begin(), ends.end(), vertices), {}, {}, {}, {}, 0, 1, 0};
  net.capacity.assign(arcs, 0.0);
  net.reverse.resize(arcs);
  net.from_source.assign(static_cast<std::size_t>(n), 0);
  net.reaches.assign(static_cast<std::size_t>(n), 0);
  for (std::size_t f = 0; f < forward.size(); ++f) {
    const auto e = static_cast<std::uint32_t>(place[2 * f]), r = static_cast<std::uint32_t>(place[2 * f + 1]);
    net.capacity[e] = forward[f].capacity;
    net.reverse[e] = Edge(forward[f].to, r);
    net.reverse[r] = Edge(forward[f].from, e);
  }
  for (std::size_t f = 0; f < forward.size() && forward[f].from == 0; ++f) {
    for (Index i = 0; i < n; ++i) {
      if (id[1][static_cast<std::size_t>(i)] == forward[f].to) {
        net.from_source[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(place[2 * f]);
        net.reaches[static_cast<std::size_t>(i)] = 1;
      }
    }
  }
  net.edges = static_cast<long long>(forward.size());
  return net;
}

// The T max-flows over `a` (A' per layer, checked).
Result<AttentionFlow> run_flows(const std::vector<Matrix>& a, Index target, const std::atomic<bool>* cancel,
                                const std::function<void(int, int)>& progress) {
  const auto started = std::chrono::steady_clock::now();
  const Index n = a.front().rows();
  FlowNetwork net = build_network(a, target);
  AttentionFlow out;
  out.scores.assign(static_cast<std::size_t>(n), 0.0f);
  out.edges = net.edges;
  std::atomic<bool> stopped{false};
  std::atomic<int> done{0};
  const int of = static_cast<int>(n);
  // Two threads, each with its own capacities and residuals (about 16 bytes an edge); the graph is shared, read only.
#pragma omp parallel num_threads(std::min(2, omp_get_max_threads()))
  {
    std::vector<double> capacity = net.capacity, residual(net.capacity.size());
    const auto edge_index = boost::get(boost::edge_index, net.graph);
    const auto capacity_map = boost::make_iterator_property_map(capacity.begin(), edge_index);
    const auto residual_map = boost::make_iterator_property_map(residual.begin(), edge_index);
    const auto reverse_map = boost::make_iterator_property_map(net.reverse.begin(), edge_index);
    const bool caller = omp_get_thread_num() == 0;
#pragma omp for schedule(dynamic, 1)
    for (Index j = 0; j < n; ++j) {
      if (stopped.load(std::memory_order_relaxed)) continue;
      if (cancel && cancel->load(std::memory_order_relaxed)) {
        stopped.store(true, std::memory_order_relaxed);
        continue;
      }
      double total = 0.0;
      for (Index i = 0; i < n; ++i) {
        if (!net.reaches[static_cast<std::size_t>(i)]) continue;
        const double c = a.front()(i, j);
        capacity[net.from_source[static_cast<std::size_t>(i)]] = c;
        total += c;
      }
      if (total > 0.0) {
        const double flow = boost::push_relabel_max_flow(net.graph, net.source, net.sink, capacity_map, residual_map,
                                                         reverse_map, boost::get(boost::vertex_index, net.graph));
        out.scores[static_cast<std::size_t>(j)] = static_cast<float>(flow);
      }
      const int finished = done.fetch_add(1) + 1;
      if (caller && progress) progress(finished, of);
    }
  }
  // A cancel that came as the last max-flow ended is still one: the caller asked not to have the result.
  if (stopped.load() || (cancel && cancel->load())) return fail(ErrorKind::Cancelled, "attention flow: cancelled");
  if (progress) progress(of, of);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

Result<AttentionFlow> flow_of_fused(std::vector<Matrix> fused, int first_layer, Index target, float discard_ratio,
                                    float residual, const std::atomic<bool>* cancel,
                                    const std::function<void(int, int)>& progress) {
  if (!(residual >= 0.0f && residual <= 1.0f)) {
    return fail(ErrorKind::OutOfRange,
                "attention flow: the residual weight must be in [0, 1], not " + std::to_string(residual));
  }
  Index n = 0;
  ATTN_ASSIGN(n, check_layers(fused, first_layer, "attention flow"));
  if (target < 0 || target >= n) {
    return fail(ErrorKind::OutOfRange, "attention flow: target row " + std::to_string(target) + " is not one of the " +
                                           with_commas(n) + " tokens");
  }
  for (Matrix& layer : fused) layer = with_residual(std::move(layer), discard_ratio, residual);
  return run_flows(fused, target, cancel, progress);
}

}  // namespace

Result<AttentionFlow> attention_flow(const std::vector<Matrix>& fused, Index target, float residual,
                                     const std::atomic<bool>* cancel, const std::function<void(int, int)>& progress) {
  return flow_of_fused(fused, 0, target, 0.0f, residual, cancel, progress);
}

Result<AttentionFlow> attention_flow(const LayeredTrace& trace, Index target, const RolloutOptions& options,
                                     const std::atomic<bool>* cancel, const std::function<void(int, int)>& progress) {
  if (!(options.discard_ratio >= 0.0f && options.discard_ratio < 1.0f)) {
    return fail(ErrorKind::OutOfRange,
                "attention flow: the discard ratio must be in [0, 1), not " + std::to_string(options.discard_ratio));
  }
  const int count = trace.layer_count(options.stage);
  if (count == 0) {
    return fail(ErrorKind::Mismatch,
                "attention flow: the trace has no " + std::string(to_string(options.stage)) + " layers");
  }
  const int last = options.last_layer < 0 ? count - 1 : options.last_layer;
  if (options.first_layer < 0 || options.first_layer > last || last >= count) {
    return fail(ErrorKind::OutOfRange, "attention flow: layers " + std::to_string(options.first_layer + 1) + " to " +
                                           std::to_string(last + 1) + " are not within the trace's " +
                                           std::to_string(count));
  }
  std::vector<Matrix> fused;
  for (int l = options.first_layer; l <= last; ++l) {
    const LayerAttention* layer = trace.find(options.stage, l);
    if (!layer || layer->maps.empty()) {
      return fail(ErrorKind::Mismatch, "attention flow: layer " + std::to_string(l + 1) + " is missing");
    }
    fused.push_back(fuse_heads(layer->maps, options.fusion));
  }
  return flow_of_fused(std::move(fused), options.first_layer, target, options.discard_ratio, options.residual, cancel,
                       progress);
}

double flow_seconds_estimate(long long edges, Index sources) {
  return static_cast<double>(edges) * static_cast<double>(sources) * kNanosPerEdgeSource * 1e-9 / 2.0;
}

}  // namespace attn::analysis
