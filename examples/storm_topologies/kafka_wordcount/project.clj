(defproject kafka_wordcount "0.0.1-SNAPSHOT"
  :resource-paths ["_resources"]
  :target-path "_build"
  :min-lein-version "2.0.0"
  :jvm-opts ["-client"]
  ; Storm 2.8.3, the newest whose modules Maven Central serves; "provided": the
  ; cluster's Storm (or heronbridge) runs the topology, the jar carries only src/.
  :dependencies  [[org.apache.storm/storm-client "2.8.3" :scope "provided"]]
  :jar-exclusions     [#"log4j\.properties" #"META-INF" #"meta-inf" #"\.yaml"]
  :uberjar-exclusions [#"log4j\.properties" #"META-INF" #"meta-inf" #"\.yaml"]
  )
