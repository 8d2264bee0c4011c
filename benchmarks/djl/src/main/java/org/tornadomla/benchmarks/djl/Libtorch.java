package org.tornadomla.benchmarks.djl;

import ai.djl.pytorch.jni.JniUtils;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.stream.Stream;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * What libtorch this process runs and which BLAS it computes with: the shared objects the process mapped
 * (/proc/self/maps), the features DJL's JNI reports, and torch's own build configuration
 * ({@code at::show_config()}, as Python's {@code torch.__config__.show()} prints it) and thread setup
 * ({@code at::get_parallel_info()}), called through the FFM API where libtorch_cpu.so exports them.
 */
final class Libtorch {
    private Libtorch() {
    }

    /** Mapped shared objects that hold a BLAS, oneDNN, an OpenMP runtime or libtorch itself. */
    static List<String> mappedLibraries() {
        TreeSet<String> libs = new TreeSet<>();
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
                int slash = line.indexOf('/');
                if (slash < 0) continue;
                String path = line.substring(slash).trim();
                String name = Path.of(path).getFileName().toString().toLowerCase();
                if (name.matches(".*(blas|mkl|dnnl|gomp|iomp|omp|torch|c10).*\\.so.*")) libs.add(path);
            }
        } catch (IOException e) {
            libs.add("(/proc/self/maps unreadable: " + e.getMessage() + ")");
        }
        return List.copyOf(libs);
    }

    /** DJL's JNI's feature list (MKL, MKLDNN, OPENMP, CUDA, ...). */
    static String features() {
        return String.join(",", new TreeSet<>(JniUtils.getFeatures()));
    }

    /** at::show_config(): torch's build configuration (BLAS_INFO, USE_MKLDNN, CPU capability, ...), if reachable. */
    static Optional<String> showConfig() {
        return stringFunction("_ZN2at11show_configB5cxx11Ev");
    }

    /** at::get_parallel_info(): the intra-op and inter-op thread counts and the OpenMP/MKL settings, if reachable. */
    static Optional<String> parallelInfo() {
        return stringFunction("_ZN2at17get_parallel_infoB5cxx11Ev");
    }

    /** MKL_Get_Version_String: the oneMKL that libtorch_cpu.so links statically, and the code path it chose for this CPU. */
    static Optional<String> mklVersion() {
        return libtorchCpu().flatMap(lookup -> lookup.find("MKL_Get_Version_String")).map(fn -> {
            try {
                MethodHandle h = Linker.nativeLinker().downcallHandle(fn, FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT));
                MemorySegment buf = Arena.global().allocate(512);
                h.invokeExact(buf, 511);
                return buf.getString(0).trim();
            } catch (Throwable t) {
                return null;
            }
        });
    }

    private static Optional<SymbolLookup> libtorchCpu() {
        return mappedLibraries().stream().filter(p -> p.endsWith("/libtorch_cpu.so")).findFirst()
                .map(p -> SymbolLookup.libraryLookup(Path.of(p), Arena.global()));
    }

    /**
     * Calls a libtorch_cpu.so function that takes nothing and returns a std::string (the C++11 ABI: returned
     * through a hidden pointer to 32 bytes, the data pointer first and the length next). Leaks the string once.
     */
    private static Optional<String> stringFunction(String symbol) {
        return libtorchCpu().flatMap(lookup -> lookup.find(symbol)).map(fn -> {
            try {
                MethodHandle h = Linker.nativeLinker().downcallHandle(fn, FunctionDescriptor.ofVoid(ADDRESS));
                MemorySegment s = Arena.global().allocate(32, 8);
                h.invokeExact(s);
                long length = s.get(JAVA_LONG, 8);
                if (length < 0 || length > 1 << 20) return null;
                return new String(s.get(ADDRESS, 0).reinterpret(length).toArray(JAVA_BYTE), StandardCharsets.UTF_8);
            } catch (Throwable t) {
                return null;
            }
        });
    }

    /** The items of show_config() that name the BLAS, LAPACK, oneDNN, OpenMP and ATen's CPU capability. */
    static String blasSummary(String config) {
        List<String> keep = config.lines().map(l -> l.trim().replaceFirst("^- ", ""))
                .flatMap(l -> l.startsWith("Build settings:") ? Arrays.stream(l.substring(15).split(",")) : Stream.of(l))
                .map(String::trim)
                .filter(l -> l.matches("(BLAS_INFO|LAPACK_INFO|USE_MKL|USE_MKLDNN|USE_OPENMP)=.*|(?i).*(math kernel|mkl-dnn|onednn|openmp \\d|cpu capability).*"))
                .toList();
        return String.join("; ", keep);
    }
}
