package org.tornadomla.cli;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A line every {@code everyS} seconds while one long piece of work runs ("… still timing java-reference B8 H128 T16384
 * absorbed f32: 30 s"), so that a shape whose steps take seconds each does not look like a hang. Nothing is printed for
 * work that ends sooner. Close it when the work ends.
 */
final class StillRunning implements AutoCloseable {
    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "mla-progress");
        t.setDaemon(true);
        return t;
    });

    private final ScheduledFuture<?> task;
    private final Object lock = new Object();
    private boolean closed;

    StillRunning(PrintWriter out, String what, double everyS) {
        long t0 = System.nanoTime(), period = Math.max(1, (long) (everyS * 1000));
        task = TIMER.scheduleAtFixedRate(() -> {
            synchronized (lock) {             // no line once close() has returned
                if (closed) return;
                out.printf(Locale.ROOT, "  … still %s: %.0f s%n", what, (System.nanoTime() - t0) / 1e9);
                out.flush();
            }
        }, period, period, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        synchronized (lock) {
            closed = true;
        }
        task.cancel(false);
    }
}
