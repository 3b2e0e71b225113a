// VarPage, the slot-directory layout shared by in-memory var pages and disk row pages:
// random operations at two header offsets against a model of slots and bytes, with the
// free-byte accounting recomputed from the model after each step.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "storage/row/var_page.h"

namespace duo::storage {
namespace {

void expect_matches(const VarPage& page, const std::map<uint32_t, std::string>& model, uint32_t offset) {
  uint32_t bytes = 0, max_slot = 0;
  for (const auto& [slot, value] : model) {
    ASSERT_TRUE(page.is_live(slot));
    ASSERT_EQ(page.size(slot), value.size());
    ASSERT_EQ(std::memcmp(page.data(slot), value.data(), value.size()), 0) << "slot " << slot;
    bytes += static_cast<uint32_t>(value.size());
    max_slot = std::max(max_slot, slot + 1);
  }
  ASSERT_EQ(page.live(), model.size());
  ASSERT_EQ(page.dir_count(), max_slot);  // trailing free slots are given back
  ASSERT_EQ(page.free_bytes(), VarPage::empty_free_bytes(offset) - bytes - VarPage::kDirBytes * max_slot);
}

std::string random_bytes(std::mt19937_64& rng, uint32_t size) {
  std::string s(size, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

TEST(VarPage, RandomOperationsAgainstModel) {
  for (uint32_t offset : {24u, 64u}) {
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      std::mt19937_64 rng(seed);
      std::vector<uint8_t> bytes(kPageSize, 0xEE);
      VarPage page(bytes.data(), offset);
      page.format();
      std::map<uint32_t, std::string> model;
      for (int step = 0; step < 3000; ++step) {
        const uint32_t size = rng() % 4 == 0 ? static_cast<uint32_t>(rng() % 3000) : static_cast<uint32_t>(rng() % 120);
        const int op = static_cast<int>(rng() % 5);
        if (op <= 1 || model.empty()) {
          if (!page.fits_new(size)) continue;
          const std::string v = random_bytes(rng, size);
          const uint32_t slot = page.allocate(size);
          ASSERT_EQ(model.count(slot), 0u);
          std::memcpy(page.data(slot), v.data(), size);
          model[slot] = v;
        } else {
          auto it = model.begin();
          std::advance(it, static_cast<long>(rng() % model.size()));
          const uint32_t slot = it->first;
          if (op == 2) {
            page.free(slot);
            model.erase(it);
            // Undo of a free: the same slot comes back with the same bytes, sometimes.
            if (rng() % 3 == 0) {
              const uint32_t growth = slot >= page.dir_count() ? VarPage::kDirBytes * (slot + 1 - page.dir_count()) : 0;
              const std::string v = random_bytes(rng, size);
              if (page.free_bytes() >= size + growth) {
                page.allocate_at(slot, size);
                std::memcpy(page.data(slot), v.data(), size);
                model[slot] = v;
              }
            }
          } else if (op == 3) {
            const uint32_t shrunk = static_cast<uint32_t>(it->second.size()) / 2;
            page.shrink(slot, shrunk);
            it->second.resize(shrunk);
          } else {
            const uint32_t grown = static_cast<uint32_t>(it->second.size()) + size;
            if (page.try_grow(slot, grown)) {
              const std::string extra = random_bytes(rng, size);
              std::memcpy(page.data(slot) + it->second.size(), extra.data(), size);
              it->second += extra;
            } else {
              ASSERT_LT(page.free_bytes(), size);
            }
          }
        }
        expect_matches(page, model, offset);
      }
      // The bytes before the layout belong to the page's owner and are never touched.
      for (uint32_t i = 0; i < offset; ++i) ASSERT_EQ(bytes[i], 0xEE);
      while (!model.empty()) {
        page.free(model.begin()->first);
        model.erase(model.begin());
      }
      expect_matches(page, model, offset);
      EXPECT_EQ(page.free_bytes(), VarPage::empty_free_bytes(offset));
    }
  }
}

}  // namespace
}  // namespace duo::storage
