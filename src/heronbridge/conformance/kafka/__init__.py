"""Apache Kafka on the conformance suite's Storm: storm-kafka-client's jars and the Flux
that declares its KafkaSpout (storm_kafka.py). The brokers are the product's
(heronbridge.jvm.kafka)."""
