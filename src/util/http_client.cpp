// SPDX-License-Identifier: Apache-2.0
#include "util/http_client.hpp"

#include <algorithm>
#include <deque>
#include <memory>
#include <utility>  // Boost 1.74's asio/awaitable.hpp uses std::exchange without it

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace gl {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// Nothing gpulaunch reads is larger than this: a metrics page is some hundred kilobytes.
constexpr std::uint64_t kMaxAnswerBody = 16 * 1024 * 1024;

class HttpExchange : public std::enable_shared_from_this<HttpExchange> {
 public:
  HttpExchange(asio::io_context& io, const HttpUrl& url, HttpRequest request,
               std::function<void(HttpAnswer)> done)
      : resolver_(io),
        stream_(io),
        url_(url),
        request_(std::move(request)),
        done_(std::move(done)) {}

  void start() {
    message_ = {request_.body.empty() ? http::verb::get : http::verb::post, request_.target, 11};
    message_.set(http::field::host, url_.host);
    message_.set(http::field::user_agent, "gpulaunch");
    if (!request_.api_key.empty())
      message_.set(http::field::authorization, "Bearer " + request_.api_key);
    if (!request_.body.empty()) {
      message_.set(http::field::content_type, "application/json");
      message_.body() = request_.body;
      message_.prepare_payload();
    }
    stream_.expires_after(request_.timeout);
    resolver_.async_resolve(url_.host, url_.port,
                            [self = shared_from_this()](beast::error_code error, auto results) {
                              if (error) return self->finish({});
                              self->connect(results);
                            });
  }

 private:
  void connect(const tcp::resolver::results_type& results) {
    stream_.async_connect(results, [self = shared_from_this()](beast::error_code error, auto) {
      if (error) return self->finish({});
      http::async_write(self->stream_, self->message_,
                        [self](beast::error_code write_error, size_t) {
                          if (write_error) return self->finish({});
                          self->read();
                        });
    });
  }

  void read() {
    parser_.body_limit(kMaxAnswerBody);
    http::async_read(stream_, buffer_, parser_,
                     [self = shared_from_this()](beast::error_code error, size_t) {
                       if (error) return self->finish({});
                       auto& response = self->parser_.get();
                       self->finish({response.result_int(), std::move(response.body())});
                     });
  }

  void finish(HttpAnswer answer) {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    if (done_) std::exchange(done_, nullptr)(std::move(answer));
  }

  tcp::resolver resolver_;
  beast::tcp_stream stream_;
  HttpUrl url_;
  HttpRequest request_;
  std::function<void(HttpAnswer)> done_;
  http::request<http::string_body> message_;
  beast::flat_buffer buffer_;
  http::response_parser<http::string_body> parser_;
};

// A batch on an io_context of its own: a new exchange starts as one ends, until all are done.
class BlockingClient final : public HttpClient {
 public:
  explicit BlockingClient(HttpUrl url) : url_(std::move(url)) {}

  std::vector<HttpReply> exchange_all(const std::vector<HttpRequest>& requests, int concurrency,
                                      std::chrono::steady_clock::time_point deadline,
                                      const HttpRetry& retry) override {
    asio::io_context io;
    std::vector<HttpReply> replies(requests.size());
    std::deque<std::size_t> waiting;
    for (std::size_t i = 0; i < requests.size(); ++i) waiting.push_back(i);
    std::function<void()> start_next = [&] {
      // Under a millisecond left: nothing could be answered in it.
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (waiting.empty() || left.count() <= 0) return;
      const std::size_t index = waiting.front();
      waiting.pop_front();
      HttpRequest request = requests[index];
      request.timeout = std::min(request.timeout, left);
      ++replies[index].sent;
      start_http_exchange(io, url_, std::move(request), [&, index](HttpAnswer answer) {
        const bool accepted = !retry.accept || retry.accept(answer);
        replies[index].answer = std::move(answer);
        // A retry goes first: the requests behind it wait, so the batch ends when it does.
        if (!accepted && replies[index].sent <= retry.times) waiting.push_front(index);
        start_next();
      });
    };
    for (int i = 0; i < std::max(1, concurrency); ++i) start_next();
    io.run();
    return replies;
  }

 private:
  HttpUrl url_;
};

}  // namespace

void start_http_exchange(boost::asio::io_context& io, const HttpUrl& url, HttpRequest request,
                         std::function<void(HttpAnswer)> done) {
  std::make_shared<HttpExchange>(io, url, std::move(request), std::move(done))->start();
}

std::unique_ptr<HttpClient> http_client(const HttpUrl& url) {
  return std::make_unique<BlockingClient>(url);
}

}  // namespace gl
