package org.tornadomla.store;

import org.tornadomla.internal.Messages;
import org.tornadomla.MlaException;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Where a store is and how to log in: {@code redis://[USER:PASSWORD@]HOST:PORT} for one server,
 * {@code rediss://…} for TLS, and a comma-separated list of such addresses for the seed nodes of a Redis
 * Cluster (every seed with the same scheme and credentials). HOST is a name, an IPv4 address or an IPv6
 * address in brackets; {@code :PASSWORD@} alone logs in as the default user (Redis's {@code requirepass}).
 *
 * <p>The password is never shown: {@link #toString()} writes {@code ***} for it, and so does every error that
 * quotes an address.
 */
public final class StoreAddress {
    /** One server, HOST:PORT. */
    public record Node(String host, int port) {
        /** Checks the host (not empty) and the port (1 … 65535). */
        public Node {
            Objects.requireNonNull(host, "host");
            if (host.isEmpty()) throw new MlaException("store address: empty host");
            if (port < 1 || port > 65535) throw new MlaException("store address: port must be in 1 … 65535, found " + port);
        }

        @Override
        public String toString() {
            return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
        }
    }

    private final List<Node> nodes;
    private final boolean tls;
    private final String user;       // null: the default user
    private final String password;   // null: no AUTH

    private StoreAddress(List<Node> nodes, boolean tls, String user, String password) {
        if (nodes.isEmpty()) throw new MlaException("store address: no server");
        this.nodes = List.copyOf(nodes);
        this.tls = tls;
        this.user = user;
        this.password = password;
    }

    /** One server without TLS or password. */
    public StoreAddress(String host, int port) {
        this(List.of(new Node(host, port)), false, null, null);
    }

    /** This address with another login ({@code user} null: the default user; {@code password} null: none). */
    public StoreAddress withLogin(String user, String password) {
        return new StoreAddress(nodes, tls, user, password);
    }

    /**
     * Parses one address or a comma-separated list (see the class comment); refused, naming the expected form and
     * quoting the input with any password masked, when it is not of that form.
     */
    public static StoreAddress parse(String uri) {
        Objects.requireNonNull(uri, "uri");
        String expected = "expected redis://[USER:PASSWORD@]HOST:PORT, rediss://… for TLS, or a comma-separated list of them for "
                + "a Redis Cluster's seeds, found " + Messages.quote(mask(uri));
        List<Node> nodes = new ArrayList<>();
        Boolean tls = null;
        String user = null, password = null;
        String[] items = uri.split(",", -1);
        for (int i = 0; i < items.length; i++) {
            String item = items[i].trim();
            boolean s;
            if (item.startsWith("redis://")) s = false;
            else if (item.startsWith("rediss://")) s = true;
            else throw new MlaException("store address: " + expected);
            String rest = item.substring(s ? "rediss://".length() : "redis://".length());
            if (rest.endsWith("/")) rest = rest.substring(0, rest.length() - 1);
            String u = null, p = null;
            int at = rest.lastIndexOf('@');
            if (at >= 0) {
                String info = rest.substring(0, at);
                rest = rest.substring(at + 1);
                int colon = info.indexOf(':');
                if (colon < 0) p = info;                  // redis://PASSWORD@host: the default user
                else {
                    u = colon == 0 ? null : info.substring(0, colon);
                    p = info.substring(colon + 1);
                }
                if (p.isEmpty()) throw new MlaException("store address: empty password in " + Messages.quote(mask(uri)));
            }
            nodes.add(node(rest, expected));
            if (i == 0) {
                tls = s;
                user = u;
                password = p;
            } else if (tls != s || !Objects.equals(user, u) || !Objects.equals(password, p)) {
                throw new MlaException("store address: the seeds of a cluster need one scheme and one login, found "
                        + Messages.quote(mask(uri)));
            }
        }
        return new StoreAddress(nodes, tls, user, password);
    }

    private static Node node(String hostPort, String expected) {
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0 || colon == hostPort.length() - 1) throw new MlaException("store address: " + expected);
        String host = hostPort.substring(0, colon), port = hostPort.substring(colon + 1);
        boolean bracketed = host.startsWith("[") && host.endsWith("]");
        if (bracketed) host = host.substring(1, host.length() - 1);
        if (host.isEmpty() || !host.matches("[A-Za-z0-9._:%-]+") || (host.contains(":") && !bracketed)) {
            throw new MlaException("store address: " + expected);
        }
        if (!port.matches("[0-9]{1,5}")) throw new MlaException("store address: " + expected);
        return new Node(host, Integer.parseInt(port));
    }

    /** {@code s} with the password of every {@code scheme://user:password@} replaced by {@code ***}. */
    public static String mask(String s) {
        StringBuilder out = new StringBuilder();
        for (String item : s.split(",", -1)) {
            if (!out.isEmpty()) out.append(',');
            int start = item.indexOf("://"), at = item.lastIndexOf('@');
            if (start < 0 || at < start) {
                out.append(item.contains("@") ? "***" + item.substring(item.lastIndexOf('@')) : item);
                continue;
            }
            String info = item.substring(start + 3, at);
            int colon = info.indexOf(':');
            out.append(item, 0, start + 3).append(colon < 0 ? "***" : info.substring(0, colon + 1) + "***").append(item.substring(at));
        }
        return out.toString();
    }

    /** The servers: one, or a cluster's seeds. */
    public List<Node> nodes() {
        return nodes;
    }

    /** The first server's host (the only one, unless a cluster's seeds are listed). */
    public String host() {
        return nodes.get(0).host();
    }

    /** The first server's port. */
    public int port() {
        return nodes.get(0).port();
    }

    /** Whether the connection uses TLS ({@code rediss://}). */
    public boolean tls() {
        return tls;
    }

    /** Whether several seeds were listed (a Redis Cluster; one seed of a cluster is found to be one on connecting). */
    public boolean listsSeeds() {
        return nodes.size() > 1;
    }

    /** The ACL user to log in as, or null for the default user. */
    public String user() {
        return user;
    }

    /** Whether a password is given (the password itself is only for the client, in this package). */
    public boolean hasPassword() {
        return password != null;
    }

    String password() {
        return password;
    }

    /** {@code redis://[USER:***@]HOST:PORT[,…]}: the address with the password masked. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        for (Node n : nodes) {
            if (!sb.isEmpty()) sb.append(',');
            sb.append(tls ? "rediss://" : "redis://");
            if (password != null) sb.append(user == null ? "" : user).append(":***@");
            sb.append(n);
        }
        return sb.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StoreAddress a && a.nodes.equals(nodes) && a.tls == tls && Objects.equals(a.user, user) && Objects.equals(a.password, password);
    }

    @Override
    public int hashCode() {
        return Objects.hash(nodes, tls, user, password);
    }
}
