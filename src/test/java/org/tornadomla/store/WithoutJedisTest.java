package org.tornadomla.store;

import org.junit.jupiter.api.Test;

import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Jedis is an optional dependency: a program without it that connects to a Redis store gets the library's one-line
 * refusal naming what to add, not a NoClassDefFoundError from inside the store (the library's classes loaded on
 * their own, without the test class path's Jedis).
 */
class WithoutJedisTest {
    @Test
    void connectingWithoutJedisSaysWhatIsMissing() throws Exception {
        URL classes = RedisBlockStore.class.getProtectionDomain().getCodeSource().getLocation();
        try (URLClassLoader library = new URLClassLoader(new URL[] {classes}, ClassLoader.getPlatformClassLoader())) {
            assertThrows(ClassNotFoundException.class, () -> library.loadClass("redis.clients.jedis.UnifiedJedis"));
            Class<?> address = library.loadClass(StoreAddress.class.getName());
            Object where = address.getMethod("parse", String.class).invoke(null, "redis://127.0.0.1:1");
            Class<?> store = library.loadClass(RedisBlockStore.class.getName());
            InvocationTargetException e = assertThrows(InvocationTargetException.class, () -> store.getMethod("connect", address).invoke(null, where));
            Throwable refusal = e.getCause();
            assertEquals("org.tornadomla.MlaException", refusal.getClass().getName(), () -> "found " + refusal);
            assertTrue(refusal.getMessage().startsWith("the Redis latent store needs Jedis (redis.clients:jedis "), refusal.getMessage());
            assertTrue(refusal.getMessage().contains("found no redis.clients.jedis.UnifiedJedis"), refusal.getMessage());
        }
    }

    /** The version the refusal names is the one the build uses. */
    @Test
    void theRefusalNamesThePomsJedis() throws Exception {
        Matcher m = Pattern.compile("<jedis.version>([^<]+)</jedis.version>").matcher(Files.readString(Path.of("pom.xml")));
        assertTrue(m.find());
        assertEquals("redis.clients:jedis " + m.group(1), RedisBlockStore.JEDIS);
    }
}
