package org.tornadomla.parallel;

import org.tornadomla.MlaException;
import org.tornadomla.graph.GraphExecutor;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntFunction;

/**
 * The devices of a multi-device layer: their executors, checked, and one host thread per device that drives it
 * (device d's steps always run on thread d, so a device's runtime sees one thread).
 */
final class Devices implements AutoCloseable {
    private final List<GraphExecutor> executors;
    private final ExecutorService[] threads;

    /**
     * Checks the list: at least one executor, no null, no executor twice (one device per shard or replica), no two
     * device executors on the same device ({@link GraphExecutor#device()}; the JVM's may share the CPU), all of one
     * kind (their classes: a layer's devices run the same kernels).
     */
    Devices(List<? extends GraphExecutor> executors, String what) {
        Objects.requireNonNull(executors, "executors");
        if (executors.isEmpty()) throw new MlaException(what + ": at least one device (executor) needed, found none");
        List<GraphExecutor> list = new ArrayList<>();
        for (int d = 0; d < executors.size(); d++) {
            GraphExecutor e = Objects.requireNonNull(executors.get(d), "executor " + d);
            for (int k = 0; k < d; k++) {
                if (list.get(k) == e) {
                    throw new MlaException(what + ": executors " + k + " and " + d + " are the same executor (" + e.device()
                            + "); give each device its own executor");
                }
                if (list.get(k).getClass() != e.getClass()) {
                    throw new MlaException(what + ": mismatched devices: executor " + d + " runs on " + e.device() + " but executor 0 on "
                            + list.getFirst().device() + "; every device of one layer must be of one kind (the same backend)");
                }
                // two executors of one device (tornado:0:0 twice) would share its memory and compute: not two devices.
                // The JVM's executors are the CPU's threads, which tests and a CPU-only split may share
                if (!(e instanceof org.tornadomla.graph.JvmExecutor) && list.get(k).device().equals(e.device())) {
                    throw new MlaException(what + ": executors " + k + " and " + d + " run on the same device (" + e.device()
                            + "); give each shard or replica a device of its own");
                }
            }
            list.add(e);
        }
        this.executors = List.copyOf(list);
        this.threads = new ExecutorService[list.size()];
        this.name = "tornadomla-" + what.toLowerCase(java.util.Locale.ROOT).replace(' ', '-') + "-device-";
    }

    private final String name;

    /** The device threads, started on the first step that needs them (again after {@link #close()}). */
    private synchronized ExecutorService thread(int d) {
        if (threads[d] == null) {
            String n = name + d;
            threads[d] = Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, n);
                t.setDaemon(true);
                return t;
            });
        }
        return threads[d];
    }

    int count() {
        return executors.size();
    }

    GraphExecutor executor(int d) {
        return executors.get(d);
    }

    /**
     * Runs {@code work.apply(d)} for each device d of {@code devices} on that device's thread, all at once, and
     * waits for every one. Returns the results in the order of {@code devices}; when any failed, throws the
     * failure of the first (in that order) once all have ended.
     */
    <T> List<T> run(int[] devices, IntFunction<T> work) {
        List<T> out = new ArrayList<>();
        if (devices.length == 1) {
            for (int d : devices) out.add(work.apply(d));
            return out;
        }
        List<Future<T>> futures = new ArrayList<>();
        for (int d : devices) {
            final int dev = d;
            futures.add(thread(d).submit(() -> work.apply(dev)));
        }
        Throwable first = null;
        boolean interrupted = false;
        for (Future<T> f : futures) {
            while (true) {
                try {
                    out.add(f.get());
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;                 // the devices are running: wait for them, then say so
                } catch (ExecutionException e) {
                    if (first == null) first = e.getCause();
                    out.add(null);
                    break;
                }
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
        if (first instanceof RuntimeException r) throw r;
        if (first instanceof Error err) throw err;
        if (first != null) throw new MlaException("a device failed: " + first);
        return out;
    }

    /** Ends the device threads (after the steps they run); the executors are their makers' to close. */
    @Override
    public synchronized void close() {
        for (int d = 0; d < threads.length; d++) {
            if (threads[d] != null) threads[d].shutdown();
            threads[d] = null;
        }
    }
}
