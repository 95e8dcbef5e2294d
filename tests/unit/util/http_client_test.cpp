// SPDX-License-Identifier: Apache-2.0
// util/http_client's batch against a small HTTP server on 127.0.0.1: a refused answer is sent
// again (and only as often as allowed), replies keep the requests' order, nothing starts after
// the deadline, and an engine that never answers is cut off at the deadline, not at the
// request's own timeout.

#include "util/http_client.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace gl {
namespace {

using namespace std::chrono_literals;

// Answers each connection's one request with answer(n, target), n counting from 1; with
// `hang`, reads the request and never answers.
class TinyServer {
 public:
  using Answer = std::function<std::pair<int, std::string>(int n, const std::string& target)>;
  explicit TinyServer(Answer answer, bool hang = false) : answer_(std::move(answer)), hang_(hang) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    ::listen(fd_, 16);
    socklen_t length = sizeof address;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~TinyServer() {
    stopping_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    for (int held : held_) ::close(held);
  }
  HttpUrl url() const { return HttpUrl{"127.0.0.1", std::to_string(port_), "/"}; }

 private:
  void serve() {
    int n = 0;
    while (!stopping_) {
      const int client = ::accept(fd_, nullptr, nullptr);
      if (client < 0) return;
      std::string request;
      char buffer[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        const auto got = ::read(client, buffer, sizeof buffer);
        if (got <= 0) break;
        request.append(buffer, static_cast<std::size_t>(got));
      }
      if (hang_) {
        held_.push_back(client);
        continue;
      }
      const auto first = request.find(' ');
      const auto target = request.substr(first + 1, request.find(' ', first + 1) - first - 1);
      const auto [status, body] = answer_(++n, target);
      const std::string reply = "HTTP/1.1 " + std::to_string(status) +
                                " X\r\nContent-Length: " + std::to_string(body.size()) +
                                "\r\nConnection: close\r\n\r\n" + body;
      [[maybe_unused]] auto wrote = ::write(client, reply.data(), reply.size());
      ::close(client);
    }
  }

  Answer answer_;
  bool hang_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::vector<int> held_;
  std::thread thread_;
};

std::vector<HttpRequest> gets(std::initializer_list<const char*> targets) {
  std::vector<HttpRequest> requests;
  for (const char* target : targets) requests.push_back(HttpRequest{target, "", 5s, ""});
  return requests;
}

const HttpRetry kRetryTwice{2, [](const HttpAnswer& answer) { return is_2xx(answer.status); }};

TEST(HttpClient, ARefusedAnswerIsSentAgainAndRepliesKeepTheRequestsOrder) {
  TinyServer server([](int n, const std::string& target) {
    return n == 1 ? std::pair{503, std::string("busy")} : std::pair{200, target};
  });
  const auto replies = http_client(server.url())
                           ->exchange_all(gets({"/a", "/b", "/c"}), 1,
                                          std::chrono::steady_clock::now() + 10s, kRetryTwice);
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_EQ(replies[0].sent, 2);
  EXPECT_EQ(replies[0].answer.status, 200);
  EXPECT_EQ(replies[0].answer.body, "/a");
  EXPECT_EQ(replies[1].sent, 1);
  EXPECT_EQ(replies[1].answer.body, "/b");
  EXPECT_EQ(replies[2].answer.body, "/c");
}

TEST(HttpClient, ARequestIsSentAtMostOnceMoreThanItsRetries) {
  TinyServer server([](int, const std::string&) { return std::pair{503, std::string("busy")}; });
  const auto replies =
      http_client(server.url())
          ->exchange_all(gets({"/a"}), 2, std::chrono::steady_clock::now() + 10s, kRetryTwice);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].sent, 3);
  EXPECT_EQ(replies[0].answer.status, 503);
}

TEST(HttpClient, NothingStartsAtTheDeadline) {
  TinyServer server([](int, const std::string& target) { return std::pair{200, target}; });
  const auto replies = http_client(server.url())
                           ->exchange_all(gets({"/a", "/b"}), 2, std::chrono::steady_clock::now());
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[0].sent, 0);
  EXPECT_FALSE(replies[0].answer.status);
  EXPECT_EQ(replies[1].sent, 0);
}

TEST(HttpClient, AnEngineThatNeverAnswersIsCutOffAtTheDeadline) {
  TinyServer server(
      [](int, const std::string&) {
        return std::pair{200, std::string()};
      },
      /*hang=*/true);
  const auto started = std::chrono::steady_clock::now();
  const auto replies =
      http_client(server.url())->exchange_all(gets({"/a"}), 1, started + 300ms, kRetryTwice);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);  // the request's own timeout is 5 s
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].sent, 1);
  EXPECT_FALSE(replies[0].answer.status);
}

}  // namespace
}  // namespace gl
