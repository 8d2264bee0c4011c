package org.tornadomla.store;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code redis-server} (Debian package redis-server) on a free loopback port, for the integration
 * tests: no persistence, a memory limit and LRU eviction as a cache tier runs it. {@link #start} skips the
 * calling test (JUnit assumption) when redis-server is not on the PATH; .ci/run installs it and checks that
 * the tests that need it ran.
 */
public final class RedisServer implements AutoCloseable {
    private final Process process;
    private final int port;

    private RedisServer(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /** The redis-server on the PATH, or null. */
    static Path binary() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (dir.isEmpty()) continue;
            Path p = Path.of(dir, "redis-server");
            if (Files.isExecutable(p)) return p;
        }
        return null;
    }

    /** Starts a server with {@code maxmemory} (e.g. "256mb"), or skips the test when redis-server is not installed. */
    public static RedisServer start(String maxmemory) throws IOException, InterruptedException {
        return start(maxmemory, List.of());
    }

    /**
     * Starts a server with more options (e.g. {@code --requirepass}, {@code --user}, {@code --tls-port}, {@code
     * --cluster-enabled}); {@code port()} is its plain port, which answers PING (or NOAUTH) when it is up.
     */
    public static RedisServer start(String maxmemory, List<String> extra) throws IOException, InterruptedException {
        Path bin = binary();
        Assumptions.assumeTrue(bin != null, "redis-server is not on the PATH (Debian: apt-get install redis-server): Redis integration test skipped");
        boolean cluster = extra.contains("--cluster-enabled");
        IOException last = null;
        for (int attempt = 0; attempt < 5; attempt++) {
            // a cluster node also listens on port + 10000 (its bus), so its port must be at most 55535 and that one free too
            int port = cluster ? freeClusterPort() : freePort();
            List<String> cmd = new ArrayList<>(List.of(bin.toString(), "--port", Integer.toString(port), "--bind", "127.0.0.1",
                    "--save", "", "--appendonly", "no", "--maxmemory", maxmemory, "--maxmemory-policy", "allkeys-lru",
                    "--protected-mode", "yes", "--loglevel", "warning", "--dir", System.getProperty("java.io.tmpdir")));
            cmd.addAll(extra.stream().map(a -> a.replace("{port}", Integer.toString(port))).toList());
            Path log = Files.createTempFile("redis-server-" + port + "-", ".log");
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            RedisServer s = new RedisServer(p, port);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline && p.isAlive()) {
                if (s.answers()) {
                    Files.deleteIfExists(log);
                    return s;
                }
                Thread.sleep(20);
            }
            boolean died = !p.isAlive();
            s.close();
            String said = Files.readString(log).strip();
            Files.deleteIfExists(log);
            if (said.length() > 800) said = "..." + said.substring(said.length() - 800);
            last = new IOException("redis-server did not answer on port " + port + (died ? " (it exited)" : " within 30 s")
                    + (said.isEmpty() ? "" : "; it printed: " + said));
        }
        throw last;
    }

    /**
     * A Redis Cluster of {@code masters} servers with {@code password} ({@code requirepass} and {@code masterauth}),
     * the slots spread by {@code redis-cli --cluster create}, state ok; node files in {@code dir}. The caller closes
     * the servers.
     */
    public static List<RedisServer> startCluster(int masters, String password, Path dir) throws IOException, InterruptedException {
        List<RedisServer> nodes = new ArrayList<>();
        try {
            for (int i = 0; i < masters; i++) {
                nodes.add(start("32mb", List.of("--cluster-enabled", "yes", "--cluster-config-file", dir.resolve("nodes-{port}.conf").toString(),
                        "--requirepass", password, "--masterauth", password)));
            }
            List<String> cmd = new ArrayList<>(List.of("redis-cli", "-a", password, "--no-auth-warning", "--cluster", "create"));
            for (RedisServer n : nodes) cmd.add("127.0.0.1:" + n.port());
            cmd.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) throw new IOException("redis-cli --cluster create failed: " + out);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline) {
                boolean ok = true;
                for (RedisServer n : nodes) ok &= n.cli(password, "cluster", "info").contains("cluster_state:ok");
                if (ok) return nodes;
                Thread.sleep(100);
            }
            throw new IOException("the cluster did not reach cluster_state:ok within 30 s");
        } catch (IOException | InterruptedException | RuntimeException e) {
            for (RedisServer n : nodes) n.close();
            throw e;
        }
    }

    /** redis-cli's answer to a command on this server, which needs no password. */
    public String command(String... command) throws IOException, InterruptedException {
        return cli(null, command);
    }

    /** redis-cli's answer to a command on this server (password null: none given). */
    public String cli(String password, String... command) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("redis-cli", "-p", Integer.toString(port)));
        if (password != null) cmd.addAll(List.of("-a", password, "--no-auth-warning"));
        cmd.addAll(List.of(command));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(10, TimeUnit.SECONDS);
        return out;
    }

    /** The cluster's seeds as --store takes them: redis://:PASSWORD@127.0.0.1:P1,… */
    public static String seeds(List<RedisServer> nodes, String password) {
        StringBuilder sb = new StringBuilder();
        for (RedisServer n : nodes) sb.append(sb.isEmpty() ? "" : ",").append("redis://:").append(password).append("@127.0.0.1:").append(n.port());
        return sb.toString();
    }

    /** A loopback port at most 55535 such that it and its cluster bus port (+10000) are free (just now). */
    static int freeClusterPort() throws IOException {
        java.util.Random r = new java.util.Random();
        for (int i = 0; i < 200; i++) {
            int port = 20000 + r.nextInt(35536);
            if (isFree(port) && isFree(port + 10000)) return port;
        }
        throw new IOException("no free loopback port pair (p, p + 10000) with p in 20000-55535 after 200 tries");
    }

    private static boolean isFree(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(false);
            s.bind(new InetSocketAddress("127.0.0.1", port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** A loopback port nothing listens on (just now). */
    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(false);
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            return s.getLocalPort();
        }
    }

    public int port() {
        return port;
    }

    public String uri() {
        return "redis://127.0.0.1:" + port;
    }

    public StoreAddress address() {
        return new StoreAddress("127.0.0.1", port);
    }

    public long pid() {
        return process.pid();
    }

    /** Whether it answers PING (raw protocol: the test checks the server, not the client under test). */
    boolean answers() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 200);
            s.setSoTimeout(500);
            OutputStream o = s.getOutputStream();
            o.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            o.flush();
            InputStream in = s.getInputStream();
            byte[] b = new byte[7];
            int n = in.readNBytes(b, 0, 7);
            String reply = new String(b, 0, n, StandardCharsets.US_ASCII);
            return reply.equals("+PONG\r\n") || reply.startsWith("-NOAUTH");   // up; with requirepass it asks for a password first
        } catch (IOException e) {
            return false;
        }
    }

    /** SIGKILL: the server vanishes mid-whatever, as a crashed machine would. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** SIGSTOP / SIGCONT: a server that accepts connections but never answers. */
    public void pause(boolean stop) throws IOException, InterruptedException {
        Process k = new ProcessBuilder("kill", stop ? "-STOP" : "-CONT", Long.toString(process.pid())).inheritIO().start();
        k.waitFor(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            try {
                pause(false);
            } catch (IOException | InterruptedException e) {
                // not stopped, or kill is missing: destroy below still ends it
            }
            process.destroy();
            try {
                if (!process.waitFor(5, TimeUnit.SECONDS)) kill();
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
