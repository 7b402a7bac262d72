// The round loop's CUDA graph built node by node, for the graph replay of small n (engine.cu:
// record_rounds, launch_rounds_graph). While a GraphRecorder is active on a thread, the round
// loop runs as usual, but its launches (engine.cu: launch) and its event records and waits
// (record_event, wait_event) become kernel nodes and edges instead of work on the streams, with
// what stream capture gives them: a node depends on what its stream has done before it, a wait
// adds what the event recorded, a programmatic dependent launch makes the node's edges
// programmatic, and a node keeps its stream's priority. A GraphRecorder made for an instantiated
// graph of the same round loop instead sets the arguments of its kernel nodes, in the order
// recorded (the same round loop on a buffer at another address).
// Nothing here puts a stream in capture mode. Stream capture built the graph before, and a
// device-wide sync in another thread during a capture (torch.cuda.synchronize()) invalidated it
// or, with the CUDA 13.0 driver, crashed the process (GPU_NOTES.md, forty-fourth session).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "cuda/check.cuh"

namespace apsp::cuda_detail {

// A round loop's graph: as recorded, with its kernel nodes in recording order, and instantiated to
// run each node at its own priority (without that a graph runs every node at its launch stream's
// priority, and the next round's pivot work waits until phase 3 has handed out all of its blocks:
// H100 1.04-1.12x slower at n = 1792-4096; GPU_NOTES.md, thirty-third session).
struct RoundsGraph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::vector<cudaGraphNode_t> nodes;
  void destroy() noexcept {
    if (exec) (void)cudaGraphExecDestroy(exec);
    if (graph) (void)cudaGraphDestroy(graph);
    exec = nullptr;
    graph = nullptr;
  }
};

class GraphRecorder {
 public:
  // Records a new graph.
  GraphRecorder() : outer_(active_) {
    APSP_CUDA_CHECK(cudaGraphCreate(&g_.graph, 0));
    active_ = this;
  }
  // Sets the kernel arguments of `g`, recorded from the same round loop, for its next launches.
  explicit GraphRecorder(const RoundsGraph& g) : outer_(active_), g_(g), updating_(true) {
    active_ = this;
  }
  GraphRecorder(const GraphRecorder&) = delete;
  GraphRecorder& operator=(const GraphRecorder&) = delete;
  ~GraphRecorder() {
    active_ = outer_;
    if (!updating_) g_.destroy();  // unless taken by instantiate()
  }

  // The recorder active on this thread, or null where work goes to the streams.
  static GraphRecorder* active() { return active_; }

  // A kernel "launched" on `s`: `args` points at each argument, of the kernel's parameter types
  // (copied here). `programmatic`: the launch's programmatic stream serialization.
  void kernel(cudaStream_t s, const void* func, dim3 grid, dim3 block, size_t smem, void** args,
              bool programmatic) {
    cudaKernelNodeParams p{};
    p.func = const_cast<void*>(func);
    p.gridDim = grid;
    p.blockDim = block;
    p.sharedMemBytes = unsigned(smem);
    p.kernelParams = args;
    if (updating_) {  // the same kernel, launch shape and edges; a failure is reported by updated()
      if (next_ < g_.nodes.size() &&
          cudaGraphExecKernelNodeSetParams(g_.exec, g_.nodes[next_], &p) != cudaSuccess) {
        (void)cudaGetLastError();
        failed_ = true;
      }
      ++next_;
      return;
    }
    cudaGraphNode_t node = nullptr;
    APSP_CUDA_CHECK(cudaGraphAddKernelNode(&node, g_.graph, nullptr, 0, &p));
    g_.nodes.push_back(node);
    std::vector<cudaGraphNode_t>& before = tails_[s];
    if (!before.empty()) {
      cudaGraphEdgeData edge{};
      if (programmatic) {
        edge.type = cudaGraphDependencyTypeProgrammatic;
        edge.from_port = cudaGraphKernelNodePortProgrammatic;
      }
      const std::vector<cudaGraphNode_t> to(before.size(), node);
      const std::vector<cudaGraphEdgeData> edges(before.size(), edge);
      APSP_CUDA_CHECK(cudaGraphAddDependencies(g_.graph, before.data(), to.data(), edges.data(),
                                               before.size()));
    }
    int priority = 0;
    APSP_CUDA_CHECK(cudaStreamGetPriority(s, &priority));
    cudaLaunchAttributeValue value{};
    value.priority = priority;
    APSP_CUDA_CHECK(cudaGraphKernelNodeSetAttribute(node, cudaLaunchAttributePriority, &value));
    before.assign(1, node);
  }
  void record(cudaEvent_t e, cudaStream_t s) {
    if (!updating_) events_[e] = tails_[s];
  }
  void wait(cudaStream_t s, cudaEvent_t e) {
    if (updating_) return;
    std::vector<cudaGraphNode_t>& tail = tails_[s];
    for (cudaGraphNode_t node : events_[e])
      if (std::find(tail.begin(), tail.end(), node) == tail.end()) tail.push_back(node);
  }

  size_t kernels() const { return g_.nodes.size(); }
  // Updating: whether every kernel node of the graph took its new arguments (false: the round
  // loop launched other kernels, or more or fewer; the graph must then be recorded anew).
  bool updated() const { return !failed_ && next_ == g_.nodes.size(); }
  // Recording: the graph recorded, instantiated; the caller owns it.
  RoundsGraph instantiate() {
    APSP_CUDA_CHECK(
        cudaGraphInstantiate(&g_.exec, g_.graph, cudaGraphInstantiateFlagUseNodePriority));
    RoundsGraph out = g_;
    g_ = RoundsGraph{};
    return out;
  }

 private:
  static inline thread_local GraphRecorder* active_ = nullptr;
  GraphRecorder* outer_;
  RoundsGraph g_;
  bool updating_ = false, failed_ = false;
  size_t next_ = 0;  // updating: the next kernel node
  // Recording: what a node added on each stream depends on, and what each event recorded.
  std::unordered_map<cudaStream_t, std::vector<cudaGraphNode_t>> tails_;
  std::unordered_map<cudaEvent_t, std::vector<cudaGraphNode_t>> events_;
};

// cudaEventRecord and cudaStreamWaitEvent, or their record where a GraphRecorder is active.
inline void record_event(cudaEvent_t e, cudaStream_t s) {
  if (GraphRecorder* g = GraphRecorder::active())
    g->record(e, s);
  else
    APSP_CUDA_CHECK(cudaEventRecord(e, s));
}
inline void wait_event(cudaStream_t s, cudaEvent_t e) {
  if (GraphRecorder* g = GraphRecorder::active())
    g->wait(s, e);
  else
    APSP_CUDA_CHECK(cudaStreamWaitEvent(s, e, 0));
}

}  // namespace apsp::cuda_detail
