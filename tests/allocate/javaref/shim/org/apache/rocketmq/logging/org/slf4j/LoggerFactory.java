package org.apache.rocketmq.logging.org.slf4j;
public final class LoggerFactory {
    public static Logger getLogger(Class<?> c) { return (f, a) -> { }; }
}
