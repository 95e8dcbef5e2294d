// SPDX-License-Identifier: Apache-2.0
// Started by sandbox_conformance_test.sh under each golden unit's exact [Service] sandbox: does
// what the real GPU stacks do at run time (catalog/sandbox_allowances and the hardening that
// stays) and says, one line each, whether the sandbox let it. Exit 0 only when every need is
// allowed and every denial denied.
//
// A seccomp denial returns EPERM (SystemCallErrorNumber=EPERM) before the kernel looks at the
// arguments; the kernel itself answers invalid arguments with EBADF/EINVAL/EFAULT. So each
// syscall is first called with invalid arguments: EPERM there is the filter, whatever the host's
// Yama or sysctls would say of a real call.
//
// Usage: sandbox_probe [--ptrace=allowed|denied] [--device=PATH]...
#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

int failures = 0;

void result(bool ok, const std::string& what, const std::string& detail = "") {
  std::printf("%s %s%s%s\n", ok ? "ok  " : "FAIL", what.c_str(), detail.empty() ? "" : ": ",
              detail.c_str());
  std::fflush(stdout);
  if (!ok) ++failures;
}

void skip(const std::string& what, const std::string& why) {
  std::printf("skip %s: %s\n", what.c_str(), why.c_str());
  std::fflush(stdout);
}

std::string err(int e) {
  return std::string(strerrordesc_np(e)) + " (" + strerrorname_np(e) + ")";
}

// The filter lets `name` through: invalid arguments reach the kernel.
void allowed_by_filter(const char* name, long rc, int e) {
  result(!(rc == -1 && e == EPERM), std::string(name) + " passes the seccomp filter",
         rc == -1 ? err(e) : "returned " + std::to_string(rc));
}

int yama_scope() {
  std::ifstream in("/proc/sys/kernel/yama/ptrace_scope");
  int scope = 0;
  return in >> scope ? scope : 0;
}

pid_t sleeper() {
  pid_t pid = fork();
  if (pid == 0) {
    pause();
    _exit(0);
  }
  return pid;
}

void reap(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

void fork_and_spawn() {
  pid_t pid = fork();
  if (pid == 0) _exit(7);
  int status = 0;
  result(
      pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 7,
      "fork", pid < 0 ? err(errno) : "");
  pid_t spawned = 0;
  char arg0[] = "true";
  char* argv[] = {arg0, nullptr};
  int rc = posix_spawn(&spawned, "/bin/true", nullptr, nullptr, argv, environ);
  result(rc == 0 && waitpid(spawned, &status, 0) == spawned && WIFEXITED(status) &&
             WEXITSTATUS(status) == 0,
         "posix_spawn /bin/true (multiprocessing spawn, forkserver)", rc ? err(rc) : "");
}

// PyTorch's expandable segments: a sibling rank opens the other's pidfd and copies its fd.
void pidfd_getfd_sibling() {
  errno = 0;
  long rc = syscall(SYS_pidfd_getfd, -1, 0, 0);
  allowed_by_filter("pidfd_getfd", rc, errno);
  if (yama_scope() >= 1) {
    skip("pidfd_getfd of a sibling's fd", "Yama ptrace_scope >= 1 on this host refuses it");
    return;
  }
  int ready[2];
  if (pipe(ready) != 0) return result(false, "pipe", err(errno));
  pid_t holder = fork();
  if (holder == 0) {
    int memfd = memfd_create("probe", 0);
    if (write(memfd, "segment", 7) != 7) _exit(1);
    char fd_number = static_cast<char>(memfd);
    if (write(ready[1], &fd_number, 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  char fd_number = 0;
  if (read(ready[0], &fd_number, 1) != 1) return result(false, "memfd holder", "no fd");
  int done[2];
  if (pipe(done) != 0) return result(false, "pipe", err(errno));
  pid_t taker = fork();
  if (taker == 0) {
    int pidfd = static_cast<int>(syscall(SYS_pidfd_open, holder, 0));
    int fd = pidfd < 0 ? -1 : static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, fd_number, 0));
    int e = errno;
    char buffer[8] = {};
    bool ok = fd >= 0 && pread(fd, buffer, 7, 0) == 7 && std::string(buffer) == "segment";
    std::string line = ok ? "" : (pidfd < 0 ? "pidfd_open: " : "pidfd_getfd: ") + err(e);
    if (write(done[1], line.c_str(), line.size() + 1) < 0) _exit(1);
    _exit(ok ? 0 : 1);
  }
  char line[256] = {};
  ssize_t got = read(done[0], line, sizeof line - 1);
  int status = 0;
  waitpid(taker, &status, 0);
  reap(holder);
  result(got > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
         "pidfd_getfd of a sibling's memfd (CUDA IPC of expandable segments)", line);
}

void process_vm_readv_child() {
  static char secret[16] = "rank-memory";
  pid_t child = sleeper();
  char buffer[16] = {};
  iovec local{buffer, sizeof buffer};
  iovec remote{secret, sizeof secret};
  ssize_t got = process_vm_readv(child, &local, 1, &remote, 1, 0);
  int e = errno;
  reap(child);
  result(got == sizeof secret && std::string(buffer) == "rank-memory",
         "process_vm_readv of a child", got < 0 ? err(e) : "");
}

// NCCL's cuMem handles and vLLM's shared buffers travel as SCM_RIGHTS over abstract sockets.
void scm_rights_abstract() {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::string name = "gpulaunch-probe-" + std::to_string(getpid());
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  socklen_t length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  int server = socket(AF_UNIX, SOCK_STREAM, 0);
  if (server < 0 || bind(server, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      listen(server, 1) != 0)
    return result(false, "abstract unix socket", err(errno));
  pid_t child = fork();
  if (child == 0) {
    int client = socket(AF_UNIX, SOCK_STREAM, 0);
    if (connect(client, reinterpret_cast<sockaddr*>(&address), length) != 0) _exit(1);
    int memfd = memfd_create("passed", 0);
    if (write(memfd, "handle", 6) != 6) _exit(1);
    char byte = 'x';
    iovec io{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr message{};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(header), &memfd, sizeof(int));
    _exit(sendmsg(client, &message, 0) == 1 ? 0 : 1);
  }
  int connection = accept(server, nullptr, nullptr);
  char byte = 0;
  iovec io{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  bool ok = connection >= 0 && recvmsg(connection, &message, 0) == 1;
  int fd = -1;
  if (ok && CMSG_FIRSTHDR(&message))
    std::memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&message)), sizeof fd);
  char buffer[8] = {};
  ok = ok && fd >= 0 && pread(fd, buffer, 6, 0) == 6 && std::string(buffer) == "handle";
  int e = errno;
  waitpid(child, nullptr, 0);
  result(ok, "SCM_RIGHTS over an abstract unix socket", ok ? "" : err(e));
}

void shm_and_wx() {
  std::string path = "/dev/shm/gpulaunch-probe-" + std::to_string(getpid());
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
  bool ok = fd >= 0 && ftruncate(fd, 1 << 20) == 0;
  void* map = ok ? mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  ok = ok && map != MAP_FAILED;
  int e = errno;
  if (ok) static_cast<char*>(map)[0] = 1;
  unlink(path.c_str());
  result(ok, "/dev/shm create + mmap (NCCL's shared-memory transport)", ok ? "" : err(e));
  void* wx =
      mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  result(wx != MAP_FAILED, "a W+X mapping (JIT: PyTorch, oneDNN, libffi)",
         wx == MAP_FAILED ? err(errno) : "");
}

// faulthandler: an alternate stack, a SIGABRT handler that writes the stacks, then the default
// action again so the process still dies of the signal.
void sigabrt_handler() {
  int report[2];
  if (pipe(report) != 0) return result(false, "pipe", err(errno));
  pid_t child = fork();
  if (child == 0) {
    static int out;
    out = report[1];
    static char stack[1 << 16];
    stack_t alternate{};
    alternate.ss_sp = stack;
    alternate.ss_size = sizeof stack;
    sigaltstack(&alternate, nullptr);
    struct sigaction action {};
    action.sa_flags = SA_ONSTACK | SA_NODEFER | SA_RESETHAND;
    action.sa_handler = [](int signal) {
      if (write(out, "Fatal Python error: Aborted\n", 28) < 0) _exit(2);
      raise(signal);
    };
    sigaction(SIGABRT, &action, nullptr);
    abort();
  }
  close(report[1]);
  char buffer[64] = {};
  ssize_t got = read(report[0], buffer, sizeof buffer - 1);
  int status = 0;
  waitpid(child, &status, 0);
  result(got > 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
         "SIGABRT with a faulthandler-like handler on an alternate stack");
}

void io_uring_and_mbind() {
  errno = 0;
  long rc = syscall(SYS_io_uring_setup, 0, nullptr);
  allowed_by_filter("io_uring_setup", rc, errno);
  io_uring_params params{};
  rc = syscall(SYS_io_uring_setup, 4, &params);
  if (rc >= 0)
    result(true, "io_uring_setup of a 4-entry ring");
  else
    skip("io_uring_setup of a 4-entry ring", "the host kernel refuses it: " + err(errno));
  void* region = mmap(nullptr, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  errno = 0;
  rc = syscall(SYS_mbind, region, 1 << 16, 0 /* MPOL_DEFAULT */, nullptr, 0, 0);
  result(rc == 0, "mbind MPOL_DEFAULT (NUMA placement of pinned buffers)", rc ? err(errno) : "");
}

// NCCL and Gloo list the interfaces over rtnetlink.
void netlink_links() {
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return result(false, "netlink RTM_GETLINK", err(errno));
  struct {
    nlmsghdr header;
    ifinfomsg info;
  } request{};
  request.header.nlmsg_len = sizeof request;
  request.header.nlmsg_type = RTM_GETLINK;
  request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  request.info.ifi_family = AF_UNSPEC;
  bool ok = send(fd, &request, sizeof request, 0) == sizeof request;
  char buffer[16384];
  ssize_t got = ok ? recv(fd, buffer, sizeof buffer, 0) : -1;
  ok = got > 0 && reinterpret_cast<nlmsghdr*>(buffer)->nlmsg_type == RTM_NEWLINK;
  result(ok, "netlink RTM_GETLINK lists an interface", ok ? "" : err(errno));
  close(fd);
}

void optional_devices(const std::vector<std::string>& devices) {
  for (const auto& device : devices) {
    if (access(device.c_str(), F_OK) != 0) {
      skip("open " + device, "this host has no such device");
      continue;
    }
    int fd = open(device.c_str(), O_RDWR | O_CLOEXEC);
    result(fd >= 0, "open " + device + " (allowed device)", fd < 0 ? err(errno) : "");
    if (fd >= 0) close(fd);
  }
}

void stays_denied(bool ptrace_allowed) {
  // Onto a directory of its own, so that even a mount that succeeds covers nothing else.
  char target[] = "/dev/shm/gpulaunch-probe-mount.XXXXXX";
  if (mkdtemp(target) == nullptr) return result(false, "mkdtemp in /dev/shm", err(errno));
  errno = 0;
  int rc = mount("gpulaunch-probe", target, "tmpfs", MS_NOSUID | MS_NODEV, "size=4k");
  const int e = errno;
  if (rc == 0) umount2(target, MNT_DETACH);
  rmdir(target);
  result(rc == -1 && e == EPERM, "mount is denied", rc == 0 ? "it mounted" : err(e));
  // A device the unit does not list (DevicePolicy=closed): the device cgroup answers EPERM. Only
  // one whose file permissions let this process open it, so that EACCES cannot answer first.
  bool tried = false;
  for (const char* device : {"/dev/fuse", "/dev/net/tun", "/dev/kvm", "/dev/vhost-net"}) {
    struct stat info {};
    if (stat(device, &info) != 0 || !S_ISCHR(info.st_mode)) continue;
    const bool owner = info.st_uid == geteuid() && (info.st_mode & 0600) == 0600;
    if (!owner && (info.st_mode & 0006) != 0006) continue;
    tried = true;
    errno = 0;
    int fd = open(device, O_RDWR | O_CLOEXEC);
    result(fd < 0 && errno == EPERM, std::string("open ") + device + " (not listed) is denied",
           fd >= 0 ? "it opened" : err(errno));
    if (fd >= 0) close(fd);
    break;
  }
  if (!tried)
    skip("a device outside the list", "no /dev/fuse, net/tun, kvm or vhost-net this user may open");
  errno = 0;
  long filtered = ptrace(PTRACE_PEEKDATA, 0, nullptr, nullptr);
  const bool filter_denies = filtered == -1 && errno == EPERM;
  if (!ptrace_allowed) {
    result(filter_denies, "ptrace is denied by the filter", filter_denies ? "" : err(errno));
    return;
  }
  result(!filter_denies, "ptrace passes the filter (service.allow \"ptrace\")", err(errno));
  if (yama_scope() >= 2) return skip("ptrace attach to a child", "Yama ptrace_scope >= 2");
  pid_t child = sleeper();
  long attached = ptrace(PTRACE_ATTACH, child, nullptr, nullptr);
  const int attach_error = errno;
  if (attached == 0) waitpid(child, nullptr, 0);
  reap(child);
  result(attached == 0, "ptrace attach to a child (py-spy, gdb)",
         attached ? err(attach_error) : "");
}

}  // namespace

int main(int argc, char** argv) {
  // Only inside a unit: on a host it would test the host.
  if (std::getenv("INVOCATION_ID") == nullptr) {
    std::fprintf(stderr, "sandbox_probe: run it as a systemd unit's ExecStart=\n");
    return 2;
  }
  bool ptrace_allowed = false;
  std::vector<std::string> devices;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--ptrace=allowed")
      ptrace_allowed = true;
    else if (arg.starts_with("--device="))
      devices.push_back(arg.substr(9));
  }
  fork_and_spawn();
  pidfd_getfd_sibling();
  process_vm_readv_child();
  scm_rights_abstract();
  shm_and_wx();
  sigabrt_handler();
  io_uring_and_mbind();
  netlink_links();
  optional_devices(devices);
  stays_denied(ptrace_allowed);
  std::printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
