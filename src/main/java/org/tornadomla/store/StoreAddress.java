package org.tornadomla.store;

import org.tornadomla.MlaException;

import java.util.Objects;

/** A store's address, {@code redis://HOST:PORT} (HOST a name, an IPv4 address or an IPv6 address in brackets). */
public record StoreAddress(String host, int port) {
    /** Checks the host (not empty) and the port (1 … 65535). */
    public StoreAddress {
        Objects.requireNonNull(host, "host");
        if (host.isEmpty()) throw new MlaException("store address: empty host");
        if (port < 1 || port > 65535) throw new MlaException("store address: port must be in 1 … 65535, found " + port);
    }

    /** Parses {@code redis://HOST:PORT}; refused, quoting it, when it is not of that form. */
    public static StoreAddress parse(String uri) {
        Objects.requireNonNull(uri, "uri");
        String expected = "expected redis://HOST:PORT, found " + MlaException.quote(uri);
        if (!uri.startsWith("redis://")) throw new MlaException("store address: " + expected);
        String rest = uri.substring("redis://".length());
        if (rest.endsWith("/")) rest = rest.substring(0, rest.length() - 1);
        int colon = rest.lastIndexOf(':');
        if (colon <= 0 || colon == rest.length() - 1) throw new MlaException("store address: " + expected);
        String host = rest.substring(0, colon), port = rest.substring(colon + 1);
        if (host.startsWith("[") && host.endsWith("]")) host = host.substring(1, host.length() - 1);
        if (host.isEmpty() || !host.matches("[A-Za-z0-9._:%-]+") || (host.contains(":") && !rest.startsWith("["))) {
            throw new MlaException("store address: " + expected);
        }
        if (!port.matches("[0-9]{1,5}")) throw new MlaException("store address: " + expected);
        return new StoreAddress(host, Integer.parseInt(port));
    }

    @Override
    public String toString() {
        return "redis://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
