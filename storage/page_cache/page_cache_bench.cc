// Hit-path cost of the page cache: request (a resident page) + unpin.
#include <benchmark/benchmark.h>

#include "storage/memory/test_memory.h"
#include "storage/page_cache/page_cache.h"

namespace duo::storage {
namespace {

class NoIo final : public PageIo {
 public:
  void start_read(PageId, uint8_t*) override {}
  void start_write(PageId, const uint8_t*) override {}
};
class NoUndo final : public UndoDurability {
 public:
  uint64_t durable_undo_lsn() const override { return UINT64_MAX; }
  void request_undo_flush(uint64_t) override {}
};

void BM_PageCacheHit(benchmark::State& state) {
  const uint32_t frames = static_cast<uint32_t>(state.range(0));
  auto memory = make_test_memory(frames);
  NoIo io;
  NoUndo undo;
  PageCacheConfig config;
  config.frames_max = frames;
  auto cache = std::move(PageCache::create(*memory, config, io, undo)).value();
  for (uint32_t p = 0; p < frames; ++p) {
    PageRef page = cache->request_page(PageId{1, p}, PageIntent::kCreate, 0).value().page;
    cache->unpin(page, PageIntent::kCreate);
  }
  uint32_t next = 0;
  for (auto _ : state) {
    Result<PageGrant> grant = cache->request_page(PageId{1, next}, PageIntent::kRead, 0);
    benchmark::DoNotOptimize(grant.value().page.data);
    cache->unpin(grant.value().page, PageIntent::kRead);
    next = next + 1 == frames ? 0 : next + 1;
  }
}
BENCHMARK(BM_PageCacheHit)->Arg(64)->Arg(2048);

}  // namespace
}  // namespace duo::storage

BENCHMARK_MAIN();
