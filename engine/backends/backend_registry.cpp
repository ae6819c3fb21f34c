// The backend registry. Every backend goes in through RegisterBackend with
// its declaration (name, description, traits) and its factory. The built-in
// ones are registered here explicitly rather than from static initializers,
// which a static library would silently drop when nothing else references
// their file. Backends another library holds (cuda) are declared here
// without a factory, so that their traits are known everywhere; the
// library's Register call (RegisterCudaBackend) adds the factory.
#include <mutex>

#include "engine/backends/cuda/cuda_backend.h"
#include "engine/backends/mpi/mpi_backend.h"
#include "engine/backends/sim/sim_backend.h"
#include "engine/core/error.h"
#include "engine/run/backend.h"

namespace shardlab {
namespace {

struct Entry {
  BackendDeclaration declaration;
  BackendFactory factory;  // null: declared, not runnable in this program
};

std::mutex& RegistryMutex() {
  static std::mutex mutex;
  return mutex;
}

void Put(std::vector<Entry>& entries, const BackendDeclaration& declaration, BackendFactory factory) {
  for (Entry& e : entries) {
    if (e.declaration.name == declaration.name) {
      e = Entry{declaration, std::move(factory)};
      return;
    }
  }
  entries.push_back(Entry{declaration, std::move(factory)});
}

std::vector<Entry> BuiltinBackends() {
  std::vector<Entry> entries;
  Put(entries, SimBackendDeclaration(), [] { return CreateSimBackend(); });
#ifdef SHARDLAB_HAVE_MPI
  Put(entries, MpiBackendDeclaration(), [] { return CreateMpiBackend(); });
#else
  Put(entries, MpiBackendDeclaration(), nullptr);
#endif
  Put(entries, CudaBackendDeclaration(), nullptr);  // RegisterCudaBackend gives it its factory
  return entries;
}

// Under RegistryMutex.
std::vector<Entry>& Registry() {
  static std::vector<Entry> entries = BuiltinBackends();
  return entries;
}

// "sim, mpi": the names `pick` keeps, for the unknown-backend message.
template <typename Pick>
std::string Names(Pick pick) {
  std::string known;
  for (const Entry& e : Registry())
    if (pick(e)) known += (known.empty() ? "" : ", ") + e.declaration.name;
  return known;
}

BackendInfo InfoOf(const Entry& e) {
  return {e.declaration.name, e.declaration.description, e.declaration.traits};
}

}  // namespace

void RegisterBackend(const BackendDeclaration& declaration, BackendFactory factory) {
  std::lock_guard lock(RegistryMutex());
  Put(Registry(), declaration, std::move(factory));
}

std::unique_ptr<Backend> CreateBackend(const std::string& name) {
  BackendFactory factory;
  std::string known;
  {
    std::lock_guard lock(RegistryMutex());
    for (const Entry& e : Registry())
      if (e.declaration.name == name) factory = e.factory;
    if (!factory) known = Names([](const Entry& e) { return e.factory != nullptr; });
  }
  if (!factory) throw Error("unknown backend '" + name + "' (available: " + known + ")");
  return factory();
}

std::vector<BackendInfo> ListBackends() {
  std::lock_guard lock(RegistryMutex());
  std::vector<BackendInfo> out;
  for (const Entry& e : Registry())
    if (e.factory) out.push_back(InfoOf(e));
  return out;
}

std::vector<BackendInfo> ListDeclaredBackends() {
  std::lock_guard lock(RegistryMutex());
  std::vector<BackendInfo> out;
  for (const Entry& e : Registry()) out.push_back(InfoOf(e));
  return out;
}

std::optional<BackendInfo> FindBackend(const std::string& name) {
  std::lock_guard lock(RegistryMutex());
  for (const Entry& e : Registry())
    if (e.declaration.name == name) return InfoOf(e);
  return std::nullopt;
}

void CheckBackendWorkerFlag(const std::string& name, const std::string& spelling, const std::string& value) {
  for (const BackendInfo& b : ListDeclaredBackends()) {
    for (const BackendFlag& f : b.traits.worker_flags) {
      if (name == f.name) return f.check(spelling, value);
    }
  }
  throw Error(spelling + ": no backend takes it");
}

std::optional<BackendTraits> FindBackendTraits(const std::string& name) {
  const std::optional<BackendInfo> info = FindBackend(name);
  if (!info) return std::nullopt;
  return info->traits;
}

BackendTraits BackendTraitsOf(const std::string& name) {
  if (std::optional<BackendTraits> traits = FindBackendTraits(name)) return *traits;
  std::string known;
  {
    std::lock_guard lock(RegistryMutex());
    known = Names([](const Entry&) { return true; });
  }
  throw Error("unknown backend '" + name + "' (available: " + known + ")");
}

}  // namespace shardlab
