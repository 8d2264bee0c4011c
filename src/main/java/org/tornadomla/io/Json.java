package org.tornadomla.io;

import org.tornadomla.internal.Messages;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import org.tornadomla.MlaException;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Strict JSON for the files this library reads (config.json, model.safetensors.index.json, safetensors
 * headers). Gson's own parser is lenient (comments, single quotes, NaN, trailing garbage) and keeps the last of
 * two equal keys; here the text must be valid UTF-8 and RFC 8259 JSON, and a key repeated in one object is an
 * error. Numbers keep their exact text (as a BigDecimal), so "1e999" is not silently a double. Errors are
 * {@link MlaException}s with the position, in one line.
 */
public final class Json {
    private Json() {
    }

    /** Largest config.json read. Real ones are a few kB. */
    public static final long MAX_CONFIG_BYTES = 1L << 20;
    /** Largest model.safetensors.index.json read (DeepSeek-V3's is about 9 MB). */
    public static final long MAX_INDEX_BYTES = 64L << 20;

    /**
     * Reads a JSON file of at most {@code maxBytes} bytes. Only regular files are read (a device or FIFO
     * would never end or never start), and never more than maxBytes + 1 bytes of them.
     *
     * @param what what the file is, for messages ("config", "index")
     */
    public static JsonElement readFile(Path file, long maxBytes, String what) {
        byte[] bytes = readBytes(file, maxBytes, what);
        try {
            return parse(bytes);
        } catch (MlaException e) {
            throw new MlaException(file + ": invalid " + what + ": " + e.getMessage(), e);
        }
    }

    /** The bytes of a regular file of at most maxBytes bytes. */
    public static byte[] readBytes(Path file, long maxBytes, String what) {
        if (!Files.exists(file)) throw new MlaException(what + " file not found: " + file);
        if (!Files.isRegularFile(file)) throw new MlaException("cannot read " + what + " " + file + ": not a regular file");
        try (InputStream in = Files.newInputStream(file)) {
            byte[] b = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, maxBytes + 1));
            if (b.length > maxBytes) {
                throw new MlaException(file + ": " + what + " file is larger than " + human(maxBytes) + "; not a " + what + " file?");
            }
            return b;
        } catch (IOException e) {
            throw new MlaException("cannot read " + what + " " + file + ": " + Messages.reason(e), e);
        }
    }

    private static String human(long bytes) {
        return bytes % (1 << 20) == 0 ? (bytes >> 20) + " MiB" : bytes + " bytes";
    }

    /** Parses UTF-8 JSON text, refusing bytes that are not UTF-8. */
    public static JsonElement parse(byte[] utf8) {
        return parse(decodeUtf8(utf8, "JSON text"));
    }

    /** The bytes as UTF-8 text; malformed or unmappable bytes are an error naming their offset. */
    public static String decodeUtf8(byte[] bytes, String what) {
        CharsetDecoder d = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(bytes.length);
        CoderResult r = d.decode(in, out, true);
        if (!r.isError()) r = d.flush(out);
        if (r.isError()) throw new MlaException(what + " is not valid UTF-8 (bad byte at offset " + in.position() + ")");
        return out.flip().toString();
    }

    /** Parses strict JSON text into a tree; a key repeated in one object is an error. */
    public static JsonElement parse(String text) {
        JsonReader r = new JsonReader(new StringReader(text));
        r.setStrictness(Strictness.STRICT);
        try {
            JsonElement e = read(r, "$");
            if (r.peek() != JsonToken.END_DOCUMENT) throw new MlaException("not valid JSON: more text after the JSON value");
            return e;
        } catch (EOFException e) {
            throw new MlaException("not valid JSON: " + (text.isBlank() ? "empty" : "it ends early") + location(e.getMessage()));
        } catch (IOException | IllegalStateException | NumberFormatException e) {
            throw new MlaException("not valid JSON: " + reason(e.getMessage()) + location(e.getMessage()));
        }
    }

    private static JsonElement read(JsonReader r, String path) throws IOException {
        switch (r.peek()) {
            case BEGIN_OBJECT -> {
                JsonObject o = new JsonObject();
                r.beginObject();
                while (r.hasNext()) {
                    String name = r.nextName();
                    if (o.has(name)) throw new MlaException("duplicate key " + Messages.quote(name) + " in " + Messages.escape(path));
                    o.add(name, read(r, path + "." + name));
                }
                r.endObject();
                return o;
            }
            case BEGIN_ARRAY -> {
                JsonArray a = new JsonArray();
                r.beginArray();
                while (r.hasNext()) a.add(read(r, path + "[" + a.size() + "]"));
                r.endArray();
                return a;
            }
            case STRING -> {
                return new JsonPrimitive(r.nextString());
            }
            case NUMBER -> {
                // an integer literal stays a BigInteger, so readers of counts can refuse 64.0, 6.4e1 or 64e0
                String text = r.nextString();
                boolean integer = text.indexOf('.') < 0 && text.indexOf('e') < 0 && text.indexOf('E') < 0;
                return new JsonPrimitive(integer ? new BigInteger(text) : new Decimal(text));
            }
            case BOOLEAN -> {
                return new JsonPrimitive(r.nextBoolean());
            }
            case NULL -> {
                r.nextNull();
                return JsonNull.INSTANCE;
            }
            default -> throw new MlaException("not valid JSON: unexpected " + r.peek() + location(r.getPath()));
        }
    }

    private static final Pattern LOCATION = Pattern.compile("at line (\\d+) column (\\d+)");

    private static String location(String gsonMessage) {
        if (gsonMessage == null) return "";
        Matcher m = LOCATION.matcher(gsonMessage);
        return m.find() ? " (line " + m.group(1) + ", column " + m.group(2) + ")" : "";
    }

    /** Gson's reason without its advice to switch to lenient parsing and its troubleshooting URL. */
    private static String reason(String gsonMessage) {
        if (gsonMessage == null) return "malformed";
        String first = gsonMessage.lines().findFirst().orElse("");
        int at = first.indexOf(" at line ");
        String r = at >= 0 ? first.substring(0, at) : first;
        if (r.contains("Strictness") || r.contains("JsonReader") || r.contains("malformed JSON")) {
            return "malformed (strict JSON only: no comments, single quotes, unquoted names, NaN/Infinity, trailing text)";
        }
        return r.isBlank() ? "malformed" : r;
    }

    // ------------------------------------------------------------------ reading fields

    /** "an object", "an array", "null", "true", "the string \"x\"", "the number 3" for messages. */
    public static String describe(JsonElement e) {
        if (e == null || e.isJsonNull()) return "null";
        if (e.isJsonObject()) return "an object";
        if (e.isJsonArray()) return "an array";
        JsonPrimitive p = e.getAsJsonPrimitive();
        if (p.isBoolean()) return p.getAsString();
        if (p.isNumber()) return "the number " + p.getAsString();
        return "the string " + Messages.quote(p.getAsString());
    }

    /** A JSON number as a double (±Infinity when out of range), or an error naming {@code name}. */
    public static double number(JsonElement e, String name) {
        if (e == null || !e.isJsonPrimitive() || !e.getAsJsonPrimitive().isNumber()) {
            throw new MlaException(name + " must be a number, found " + describe(e));
        }
        return decimal(e).doubleValue();
    }

    /** The exact value of a JSON number read by {@link #parse} (an integer literal is held as a BigInteger). */
    private static BigDecimal decimal(JsonElement e) {
        Number n = e.getAsJsonPrimitive().getAsNumber();
        return n instanceof Decimal d ? d.value : n instanceof BigInteger i ? new BigDecimal(i) : new BigDecimal(n.toString());
    }

    /** A number written with a fraction or an exponent: its exact value, printed as it was written. */
    private static final class Decimal extends Number {
        private static final long serialVersionUID = 1L;
        private final String text;
        private final BigDecimal value;

        Decimal(String text) {
            this.text = text;
            this.value = new BigDecimal(text);
        }

        @Override
        public int intValue() {
            return value.intValue();
        }

        @Override
        public long longValue() {
            return value.longValue();
        }

        @Override
        public float floatValue() {
            return value.floatValue();
        }

        @Override
        public double doubleValue() {
            return value.doubleValue();
        }

        @Override
        public String toString() {
            return text;
        }
    }

    /** A JSON number that is a whole number in int range, or an error naming {@code name}. */
    public static int integer(JsonElement e, String name) {
        if (e == null || !e.isJsonPrimitive() || !e.getAsJsonPrimitive().isNumber()) {
            throw new MlaException(name + " must be an integer, found " + describe(e));
        }
        BigDecimal d = decimal(e);
        try {
            if (d.abs().compareTo(BigDecimal.valueOf(Integer.MAX_VALUE)) > 0) throw new ArithmeticException();
            return d.intValueExact();
        } catch (ArithmeticException x) {
            throw new MlaException(name + " must be an integer in " + Integer.MIN_VALUE + " … " + Integer.MAX_VALUE + ", found "
                    + describe(e));
        }
    }

    /**
     * A non-negative integer in long range written as one (digits only: 64.0, 6.4e1 and 64e0 are refused, as
     * the safetensors reference reader refuses them), or an error naming {@code name}.
     */
    public static long nonNegativeLong(JsonElement e, String name) {
        if (e == null || !e.isJsonPrimitive() || !e.getAsJsonPrimitive().isNumber()
                || !(e.getAsJsonPrimitive().getAsNumber() instanceof BigInteger)) {
            throw new MlaException(name + " must be a non-negative integer (written without a fraction or exponent), found " + describe(e));
        }
        BigDecimal d = decimal(e);
        try {
            if (d.signum() < 0 || d.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) throw new ArithmeticException();
            return d.longValueExact();
        } catch (ArithmeticException x) {
            throw new MlaException(name + " must be a non-negative integer, found " + describe(e));
        }
    }

    /** A JSON string, or an error naming {@code name}. */
    public static String string(JsonElement e, String name) {
        if (e == null || !e.isJsonPrimitive() || !e.getAsJsonPrimitive().isString()) {
            throw new MlaException(name + " must be a string, found " + describe(e));
        }
        return e.getAsString();
    }
}
