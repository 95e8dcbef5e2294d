// SPDX-License-Identifier: Apache-2.0
#pragma once
// libsystemd, loaded at the first call that talks to systemd (dlopen), as systemd itself loads its
// optional libraries (src/shared/dlfcn-util.h: one `sym_` pointer per function, typed from the
// library's own declaration). Linked, libsystemd and what it pulls in (libgcrypt, libgpg-error,
// lz4, zstd, lzma, libcap) cost about 68 page faults and 2-3 ms at every start of every command
// (bench/README.md, where check's time goes), and `check`, `render`, `show` and `init` never talk
// to systemd. Included by systemd/'s three .cpp files only: the one place the sd-* headers are.

#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

#include "util/error.hpp"

// Every libsystemd function gpulaunch calls. A new call is added here, or it does not link.
#define GL_LIBSYSTEMD_FUNCTIONS(X)  \
  X(sd_bus_call)                    \
  X(sd_bus_call_method)             \
  X(sd_bus_error_free)              \
  X(sd_bus_flush_close_unref)       \
  X(sd_bus_match_signal)            \
  X(sd_bus_message_append)          \
  X(sd_bus_message_close_container) \
  X(sd_bus_message_enter_container) \
  X(sd_bus_message_exit_container)  \
  X(sd_bus_message_new_method_call) \
  X(sd_bus_message_open_container)  \
  X(sd_bus_message_read)            \
  X(sd_bus_message_read_strv)       \
  X(sd_bus_message_skip)            \
  X(sd_bus_message_unref)           \
  X(sd_bus_new)                     \
  X(sd_bus_open_system)             \
  X(sd_bus_open_user)               \
  X(sd_bus_process)                 \
  X(sd_bus_set_address)             \
  X(sd_bus_slot_unref)              \
  X(sd_bus_start)                   \
  X(sd_bus_unref)                   \
  X(sd_bus_wait)                    \
  X(sd_journal_add_disjunction)     \
  X(sd_journal_add_match)           \
  X(sd_journal_close)               \
  X(sd_journal_flush_matches)       \
  X(sd_journal_get_cursor)          \
  X(sd_journal_get_data)            \
  X(sd_journal_get_realtime_usec)   \
  X(sd_journal_next)                \
  X(sd_journal_open)                \
  X(sd_journal_previous)            \
  X(sd_journal_seek_realtime_usec)  \
  X(sd_journal_seek_tail)           \
  X(sd_journal_sendv)               \
  X(sd_journal_set_data_threshold)  \
  X(sd_journal_wait)                \
  X(sd_notify)                      \
  X(sd_watchdog_enabled)

namespace gl::libsystemd {

#define GL_LIBSYSTEMD_DECLARE(name) extern decltype(&::name) sym_##name;
GL_LIBSYSTEMD_FUNCTIONS(GL_LIBSYSTEMD_DECLARE)
#undef GL_LIBSYSTEMD_DECLARE

// Loads libsystemd.so.0 once and sets every sym_ pointer; kept loaded for the process's life.
// Called where a conversation with systemd begins (a bus, a journal, a notification): every later
// call in it may then use the pointers. "Failed to load 'libsystemd.so.0': ..." when the library
// or one of its functions is missing (the package depends on libsystemd0 >= 252).
Result<void> load();

}  // namespace gl::libsystemd
