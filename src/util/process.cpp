#include "util/process.hpp"

#include <future>

#include <boost/asio/io_context.hpp>
#include <boost/process.hpp>

namespace gl {

Result<ProcessOutput> run_process(const std::string& program, const std::vector<std::string>& args,
                                  std::chrono::milliseconds timeout) {
  namespace bp = boost::process;
  boost::asio::io_context io;
  std::future<std::string> out;
  std::error_code start_error;
  bp::child child(bp::exe = program, bp::args = args, bp::std_out > out, bp::std_err > bp::null,
                  bp::std_in < bp::null, io, start_error);
  if (start_error) return failf("Failed to run '{}': {}", program, start_error.message());
  // Returns once the output pipe closes and the exit is reaped, or at the deadline.
  io.run_for(timeout);
  if (!io.stopped()) {
    std::error_code ignored;
    child.terminate(ignored);
    return failf("Failed to run '{}': no answer within {} ms", program, timeout.count());
  }
  std::error_code wait_error;
  child.wait(wait_error);
  ProcessOutput result;
  result.exit_code = child.exit_code();
  result.out = out.get();
  return result;
}

}  // namespace gl
