// The backend registry. Built-in backends are listed here explicitly rather
// than registering themselves from static initializers, which a static
// library would silently drop when nothing else references their file.
#include <mutex>

#include "engine/backends/sim/sim_backend.h"
#ifdef SHARDLAB_HAVE_MPI
#include "engine/backends/mpi/mpi_backend.h"
#endif
#include "engine/core/error.h"
#include "engine/run/backend.h"

namespace shardlab {
namespace {

struct Entry {
  std::string name;
  std::string description;
  BackendFactory factory;
};

std::mutex& RegistryMutex() {
  static std::mutex mutex;
  return mutex;
}

std::vector<Entry>& Registry() {
  static std::vector<Entry> entries = {
      {"sim", "discrete-event simulator: link sharing, latency, real float32 data (default)",
       [] { return CreateSimBackend(); }},
#ifdef SHARDLAB_HAVE_MPI
      {"mpi", "one process per rank under mpirun: MPI transfers, real data, host clocks aligned",
       [] { return CreateMpiBackend(); }},
#endif
  };
  return entries;
}

}  // namespace

void RegisterBackend(const std::string& name, const std::string& description,
                     BackendFactory factory) {
  std::lock_guard lock(RegistryMutex());
  for (Entry& e : Registry()) {
    if (e.name == name) {
      e = Entry{name, description, std::move(factory)};
      return;
    }
  }
  Registry().push_back(Entry{name, description, std::move(factory)});
}

std::unique_ptr<Backend> CreateBackend(const std::string& name) {
  std::lock_guard lock(RegistryMutex());
  std::string known;
  for (const Entry& e : Registry()) {
    if (e.name == name) return e.factory();
    known += (known.empty() ? "" : ", ") + e.name;
  }
  throw Error("unknown backend '" + name + "' (available: " + known + ")");
}

std::vector<BackendInfo> ListBackends() {
  std::lock_guard lock(RegistryMutex());
  std::vector<BackendInfo> out;
  for (const Entry& e : Registry()) out.push_back({e.name, e.description});
  return out;
}

}  // namespace shardlab
