package org.apache.commons.collections;
public final class CollectionUtils {
    public static boolean isEmpty(java.util.Collection<?> c) { return c == null || c.isEmpty(); }
}
