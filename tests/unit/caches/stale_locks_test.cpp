// SPDX-License-Identifier: Apache-2.0
#include "caches/stale_locks.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "temp_tree.hpp"

namespace gl {
namespace {

namespace fs = std::filesystem;
using StaleLocks = test::TempTree;

constexpr const char* kLockDir = "flashinfer/.cache/flashinfer/0.4.1/120a/cached_ops/tmp";

enum class LockKind { flock, fcntl };

// A child process that holds a lock on `path` until destroyed, as a running JIT build would.
class LockHolder {
 public:
  LockHolder(const fs::path& path, LockKind kind) {
    int ready[2], done[2];
    EXPECT_EQ(::pipe(ready), 0);
    EXPECT_EQ(::pipe(done), 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(ready[0]);
      ::close(done[1]);  // or the child's own copy would keep the EOF it waits for from coming
      int fd = ::open(path.c_str(), O_RDWR);
      bool locked = false;
      if (fd >= 0 && kind == LockKind::flock) locked = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
      if (fd >= 0 && kind == LockKind::fcntl) {
        struct flock lock {};
        lock.l_type = F_WRLCK;
        lock.l_whence = SEEK_SET;
        locked = ::fcntl(fd, F_SETLK, &lock) == 0;
      }
      char byte = locked ? 'y' : 'n';
      (void)!::write(ready[1], &byte, 1);
      (void)!::read(done[0], &byte, 1);
      ::_exit(0);
    }
    char byte = 0;
    EXPECT_EQ(::read(ready[0], &byte, 1), 1);
    EXPECT_EQ(byte, 'y') << "the child could not take the lock";
    ::close(ready[0]);
    ::close(ready[1]);
    ::close(done[0]);
    release_ = done[1];
  }
  ~LockHolder() {
    ::close(release_);  // EOF tells the child to exit
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }

 private:
  pid_t pid_ = -1;
  int release_ = -1;
};

TEST_F(StaleLocks, ALockNoProcessHoldsIsRemoved) {
  write(base / "root" / kLockDir / "batch_prefill.lock", "");
  write(base / "root" / kLockDir / "batch_prefill.cu", "source");
  auto root = ConfinedRoot::open(base / "root");
  ASSERT_TRUE(root);
  auto sweep = remove_stale_locks(*root, "flashinfer", "cached_ops/tmp");
  ASSERT_TRUE(sweep) << sweep.error().message;
  ASSERT_EQ(sweep->removed.size(), 1u);
  EXPECT_EQ(sweep->removed[0], std::string(kLockDir) + "/batch_prefill.lock");
  EXPECT_FALSE(fs::exists(base / "root" / kLockDir / "batch_prefill.lock"));
  EXPECT_TRUE(fs::exists(base / "root" / kLockDir / "batch_prefill.cu"));  // not a lock
}

TEST_F(StaleLocks, ALockHeldWithFlockByAnotherProcessIsKept) {
  const auto lock = base / "root" / kLockDir / "held.lock";
  write(lock, "");
  write(base / "root" / kLockDir / "stale.lock", "");
  LockHolder holder(lock, LockKind::flock);
  auto root = ConfinedRoot::open(base / "root");
  ASSERT_TRUE(root);
  auto sweep = remove_stale_locks(*root, "flashinfer", "cached_ops/tmp");
  ASSERT_TRUE(sweep) << sweep.error().message;
  EXPECT_TRUE(fs::exists(lock));
  EXPECT_EQ(sweep->held, std::vector<std::string>{std::string(kLockDir) + "/held.lock"});
  EXPECT_EQ(sweep->removed, std::vector<std::string>{std::string(kLockDir) + "/stale.lock"});
}

TEST_F(StaleLocks, ALockHeldWithFcntlByAnotherProcessIsKept) {
  const auto lock = base / "root" / kLockDir / "held.lock";
  write(lock, "");
  LockHolder holder(lock, LockKind::fcntl);
  auto root = ConfinedRoot::open(base / "root");
  ASSERT_TRUE(root);
  auto sweep = remove_stale_locks(*root, "flashinfer", "cached_ops/tmp");
  ASSERT_TRUE(sweep);
  EXPECT_TRUE(fs::exists(lock));
  EXPECT_EQ(sweep->held.size(), 1u);
}

TEST_F(StaleLocks, AnFlockInThisProcessThroughAnotherDescriptionCountsAsHeld) {
  const auto lock = base / "root" / kLockDir / "held.lock";
  write(lock, "");
  int fd = ::open(lock.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  auto root = ConfinedRoot::open(base / "root");
  ASSERT_TRUE(root);
  auto sweep = remove_stale_locks(*root, "flashinfer", "cached_ops/tmp");
  ::close(fd);
  ASSERT_TRUE(sweep);
  EXPECT_TRUE(fs::exists(lock));
}

TEST_F(StaleLocks, ACacheWithLocksAnywhereHasThemSweptInEveryDirectory) {
  // FlashInfer's cubin downloads: "<file>.lock" beside each file (jit/cubin_loader.py).
  write(base / "root/flashinfer_cubin/top.lock", "");
  write(base / "root/flashinfer_cubin/a1b2/fmha/trtllm-gen/k.cubin.lock", "");
  write(base / "root/flashinfer_cubin/a1b2/fmha/trtllm-gen/k.cubin", "cubin");
  write(base / "root/flashinfer_cubin/a1b2/held.lock", "");
  LockHolder holder(base / "root/flashinfer_cubin/a1b2/held.lock", LockKind::flock);
  auto root = ConfinedRoot::open(base / "root");
  ASSERT_TRUE(root);
  auto sweep = remove_stale_locks(*root, "flashinfer_cubin", kLocksAnywhere);
  ASSERT_TRUE(sweep) << sweep.error().message;
  EXPECT_EQ(sweep->removed.size(), 2u);
  EXPECT_EQ(sweep->held, std::vector<std::string>{"flashinfer_cubin/a1b2/held.lock"});
  EXPECT_FALSE(fs::exists(base / "root/flashinfer_cubin/top.lock"));
  EXPECT_FALSE(fs::exists(base / "root/flashinfer_cubin/a1b2/fmha/trtllm-gen/k.cubin.lock"));
  EXPECT_EQ(read(base / "root/flashinfer_cubin/a1b2/fmha/trtllm-gen/k.cubin"), "cubin");
}

TEST_F(StaleLocks, LockFilesElsewhereAndSymlinkedLocksAreLeftAlone) {
  write(base / "root/flashinfer/other/x.lock", "");
  write(base / "root/flashinfer/not_cached_ops/tmp/y.lock", "");
  write(base / "outside/precious.lock", "keep me");
  fs::create_directories(base / "root" / kLockDir);
  fs::create_symlink(base / "outside/precious.lock", base / "root" / kLockDir / "link.lock");
  auto root = ConfinedRoot::open(base / "root");
  ASSERT_TRUE(root);
  auto sweep = remove_stale_locks(*root, "flashinfer", "cached_ops/tmp");
  ASSERT_TRUE(sweep);
  EXPECT_TRUE(sweep->removed.empty());
  EXPECT_TRUE(fs::exists(base / "root/flashinfer/other/x.lock"));
  EXPECT_TRUE(fs::exists(base / "root/flashinfer/not_cached_ops/tmp/y.lock"));
  EXPECT_EQ(read(base / "outside/precious.lock"), "keep me");
}

}  // namespace
}  // namespace gl
