// swift-cast — Apache-2.0

extension DocumentSchema {
    /// The option-profile schema (`urn:swift-cast:profile:1`).
    static let profile = DocumentSchema(
        xsd: profileXSD,
        kind: "profile",
        rootElement: "castProfile",
        namespace: CastProfile.namespace
    )
}

/// The XML Schema every profile is validated against before it is mapped. The `xs:documentation` of each simple
/// type is what error messages say a value "must be", so keep it a noun phrase.
let profileXSD = #"""
    <?xml version="1.0" encoding="UTF-8"?>
    <xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"
               xmlns:p="urn:swift-cast:profile:1"
               targetNamespace="urn:swift-cast:profile:1"
               elementFormDefault="qualified">

      <!-- Value types -->

      <xs:simpleType name="duration">
        <xs:annotation><xs:documentation>a duration like 5s or 500ms</xs:documentation></xs:annotation>
        <xs:restriction base="xs:token">
          <xs:pattern value="[0-9]+(\.[0-9]+)?(ms|s|m|h)"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="optionalDuration">
        <xs:annotation><xs:documentation>a duration like 5s or 500ms, or none</xs:documentation></xs:annotation>
        <xs:restriction base="xs:token">
          <xs:pattern value="[0-9]+(\.[0-9]+)?(ms|s|m|h)|none"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="applicationID">
        <xs:annotation>
          <xs:documentation>default-media-receiver or an application id of 8 hex digits like CC1AD845</xs:documentation>
        </xs:annotation>
        <xs:restriction base="xs:token">
          <xs:pattern value="default-media-receiver|[0-9A-F]{8}"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="discoveryApplicationID">
        <xs:annotation>
          <xs:documentation>
            any, default-media-receiver or an application id of 8 hex digits like CC1AD845
          </xs:documentation>
        </xs:annotation>
        <xs:restriction base="xs:token">
          <xs:pattern value="any|default-media-receiver|[0-9A-F]{8}"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="capabilityName">
        <xs:restriction base="xs:token">
          <xs:enumeration value="videoOut"/>
          <xs:enumeration value="videoIn"/>
          <xs:enumeration value="audioOut"/>
          <xs:enumeration value="audioIn"/>
          <xs:enumeration value="developerMode"/>
          <xs:enumeration value="multizoneGroup"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="capabilities">
        <xs:annotation>
          <xs:documentation>
            a space-separated list of videoOut, videoIn, audioOut, audioIn, developerMode, multizoneGroup (or none)
          </xs:documentation>
        </xs:annotation>
        <xs:union>
          <xs:simpleType>
            <xs:restriction base="xs:token">
              <xs:enumeration value="none"/>
            </xs:restriction>
          </xs:simpleType>
          <xs:simpleType>
            <xs:restriction>
              <xs:simpleType>
                <xs:list itemType="p:capabilityName"/>
              </xs:simpleType>
              <xs:minLength value="1"/>
            </xs:restriction>
          </xs:simpleType>
        </xs:union>
      </xs:simpleType>

      <xs:simpleType name="scanRanges">
        <xs:annotation>
          <xs:documentation>
            a space-separated list of IPv4 ranges A.B.C.D/N of at most 4096 addresses each (or none)
          </xs:documentation>
        </xs:annotation>
        <xs:restriction base="xs:token">
          <xs:pattern value="none|[0-9]{1,3}(\.[0-9]{1,3}){3}(/[0-9]{1,2})?( [0-9]{1,3}(\.[0-9]{1,3}){3}(/[0-9]{1,2})?)*"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="language">
        <xs:annotation><xs:documentation>a BCP-47 language tag like en-US, or none</xs:documentation></xs:annotation>
        <xs:restriction base="xs:token">
          <xs:pattern value="[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*|none"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="deviceAuthPolicy">
        <xs:annotation><xs:documentation>one of off, warn, require</xs:documentation></xs:annotation>
        <xs:restriction base="xs:token">
          <xs:enumeration value="off"/>
          <xs:enumeration value="warn"/>
          <xs:enumeration value="require"/>
        </xs:restriction>
      </xs:simpleType>
      <xs:simpleType name="credentialsType">
        <xs:annotation><xs:documentation>one of android, ios, web, cloud</xs:documentation></xs:annotation>
        <xs:restriction base="xs:token">
          <xs:enumeration value="android"/>
          <xs:enumeration value="ios"/>
          <xs:enumeration value="web"/>
          <xs:enumeration value="cloud"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="multiplier">
        <xs:annotation><xs:documentation>a number of at least 1, like 2 or 1.5</xs:documentation></xs:annotation>
        <xs:restriction base="xs:decimal">
          <xs:minInclusive value="1"/>
          <xs:maxInclusive value="100"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="fraction">
        <xs:annotation><xs:documentation>a number from 0 to 1, like 0.2</xs:documentation></xs:annotation>
        <xs:restriction base="xs:decimal">
          <xs:minInclusive value="0"/>
          <xs:maxInclusive value="1"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="attempts">
        <xs:annotation><xs:documentation>a whole number of at least 1, or unlimited</xs:documentation></xs:annotation>
        <xs:restriction base="xs:token">
          <xs:pattern value="[1-9][0-9]{0,8}|unlimited"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="volumeStep">
        <xs:annotation>
          <xs:documentation>a volume fraction above 0 and at most 1, like 0.05, or receiver</xs:documentation>
        </xs:annotation>
        <xs:restriction base="xs:token">
          <xs:pattern value="0?\.[0-9]*[1-9][0-9]*|1(\.0*)?|receiver"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="host">
        <xs:annotation><xs:documentation>a host name or IP address</xs:documentation></xs:annotation>
        <xs:restriction base="xs:token">
          <xs:pattern value="[^\s/]+"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="port">
        <xs:annotation><xs:documentation>a port number from 1 to 65535</xs:documentation></xs:annotation>
        <xs:restriction base="xs:int">
          <xs:minInclusive value="1"/>
          <xs:maxInclusive value="65535"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="minimumLevel">
        <xs:annotation>
          <xs:documentation>one of trace, debug, info, notice, warning, error, critical, off</xs:documentation>
        </xs:annotation>
        <xs:restriction base="xs:token">
          <xs:pattern value="trace|debug|info|notice|warning|error|critical|off"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="categoryLevel">
        <xs:annotation>
          <xs:documentation>one of trace, debug, info, notice, warning, error, critical</xs:documentation>
        </xs:annotation>
        <xs:restriction base="xs:token">
          <xs:pattern value="trace|debug|info|notice|warning|error|critical"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="categoryPattern">
        <xs:annotation>
          <xs:documentation>a category name or glob without spaces, like CastSession* or Cast*Channel</xs:documentation>
        </xs:annotation>
        <xs:restriction base="xs:string">
          <xs:pattern value="[^\s]+"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="regularExpression">
        <xs:annotation><xs:documentation>a non-empty regular expression</xs:documentation></xs:annotation>
        <xs:restriction base="xs:string">
          <xs:minLength value="1"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="path">
        <xs:annotation>
          <xs:documentation>a local file path (relative paths are relative to this document)</xs:documentation>
        </xs:annotation>
        <xs:restriction base="xs:string">
          <xs:minLength value="1"/>
          <xs:pattern value="([^:]|:[^/]|:/[^/])+"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="listenAddress">
        <xs:annotation>
          <xs:documentation>HOST:PORT like 127.0.0.1:8765 or [::1]:8765</xs:documentation>
        </xs:annotation>
        <xs:restriction base="xs:token">
          <xs:pattern value="(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.\-]+):[0-9]{1,5}"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="brokerURL">
        <xs:annotation>
          <xs:documentation>mqtt://host[:port], mqtts://host[:port], unix:///path or none</xs:documentation>
        </xs:annotation>
        <xs:restriction base="xs:string">
          <xs:pattern value="(mqtts?://[^\s/]+|unix:///\S+|none)"/>
        </xs:restriction>
      </xs:simpleType>
      <xs:simpleType name="topicLevel">
        <xs:annotation>
          <xs:documentation>one MQTT topic level: 1 to 64 letters, digits, - or _</xs:documentation>
        </xs:annotation>
        <xs:restriction base="xs:token">
          <xs:pattern value="[A-Za-z0-9_\-]{1,64}"/>
        </xs:restriction>
      </xs:simpleType>
      <xs:simpleType name="brokerUsername">
        <xs:annotation>
          <xs:documentation>the MQTT broker user name</xs:documentation>
        </xs:annotation>
        <xs:restriction base="xs:string">
          <xs:minLength value="1"/>
          <xs:maxLength value="256"/>
        </xs:restriction>
      </xs:simpleType>
      <xs:simpleType name="tokenHash">
        <xs:annotation>
          <xs:documentation>sha256: and 64 hex digits, as castd token prints</xs:documentation>
        </xs:annotation>
        <xs:restriction base="xs:token">
          <xs:pattern value="sha256:[0-9a-fA-F]{64}"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="webOrigin">
        <xs:annotation>
          <xs:documentation>a web origin like https://home.example or http://localhost:3000</xs:documentation>
        </xs:annotation>
        <xs:restriction base="xs:token">
          <xs:pattern value="https?://[A-Za-z0-9.\-\[\]:]+"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="requestRate">
        <xs:annotation>
          <xs:documentation>requests per second like 50 or 0.5, or none</xs:documentation>
        </xs:annotation>
        <xs:restriction base="xs:token">
          <xs:pattern value="[0-9]+(\.[0-9]+)?|none"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="text">
        <xs:annotation><xs:documentation>non-empty text</xs:documentation></xs:annotation>
        <xs:restriction base="xs:string">
          <xs:minLength value="1"/>
        </xs:restriction>
      </xs:simpleType>

      <!-- The document -->

      <xs:element name="castProfile">
        <xs:complexType>
          <xs:all>
            <xs:element name="receiver" minOccurs="0">
              <xs:complexType>
                <xs:attribute name="applicationID" type="p:applicationID" use="required"/>
              </xs:complexType>
            </xs:element>
            <xs:element name="discovery" minOccurs="0">
              <xs:complexType>
                <xs:attribute name="applicationID" type="p:discoveryApplicationID"/>
                <xs:attribute name="requiredCapabilities" type="p:capabilities"/>
                <xs:attribute name="scanRanges" type="p:scanRanges"/>
              </xs:complexType>
            </xs:element>
            <xs:element name="launch" minOccurs="0">
              <xs:complexType>
                <xs:attribute name="language" type="p:language"/>
                <xs:attribute name="relaunchIfRunning" type="xs:boolean"/>
                <xs:attribute name="androidReceiverCompatible" type="xs:boolean"/>
              </xs:complexType>
            </xs:element>
            <xs:element name="credentials" minOccurs="0">
              <xs:complexType>
                <xs:attribute name="data" type="p:text" use="required"/>
                <xs:attribute name="type" type="p:credentialsType"/>
              </xs:complexType>
            </xs:element>
            <xs:element name="timeouts" minOccurs="0">
              <xs:complexType>
                <xs:attribute name="connect" type="p:duration"/>
                <xs:attribute name="request" type="p:duration"/>
                <xs:attribute name="launch" type="p:duration"/>
              </xs:complexType>
            </xs:element>
            <xs:element name="heartbeat" minOccurs="0">
              <xs:complexType>
                <xs:attribute name="interval" type="p:optionalDuration"/>
                <xs:attribute name="deadAfter" type="p:optionalDuration"/>
              </xs:complexType>
            </xs:element>
            <xs:element name="reconnect" minOccurs="0">
              <xs:complexType>
                <xs:attribute name="initialDelay" type="p:duration"/>
                <xs:attribute name="maximumDelay" type="p:duration"/>
                <xs:attribute name="multiplier" type="p:multiplier"/>
                <xs:attribute name="jitter" type="p:fraction"/>
                <xs:attribute name="maximumAttempts" type="p:attempts"/>
              </xs:complexType>
            </xs:element>
            <xs:element name="session" minOccurs="0">
              <xs:complexType>
                <xs:attribute name="resumeSavedSessions" type="xs:boolean"/>
                <xs:attribute name="stopReceiverApplicationOnEnd" type="xs:boolean"/>
                <xs:attribute name="waitWhileSuspended" type="xs:boolean"/>
                <xs:attribute name="stateDirectory" type="p:path"/>
              </xs:complexType>
            </xs:element>
            <xs:element name="deviceAuth" minOccurs="0">
              <xs:complexType>
                <xs:attribute name="policy" type="p:deviceAuthPolicy"/>
                <xs:attribute name="trustAnchors" type="p:path"/>
                <xs:attribute name="allowSHA1" type="xs:boolean"/>
                <xs:attribute name="checkRevocation" type="xs:boolean"/>
                <xs:attribute name="timeout" type="p:duration"/>
              </xs:complexType>
            </xs:element>
            <xs:element name="volume" minOccurs="0">
              <xs:complexType>
                <xs:attribute name="step" type="p:volumeStep"/>
              </xs:complexType>
            </xs:element>
            <xs:element name="staticDevices" minOccurs="0">
              <xs:complexType>
                <xs:sequence>
                  <xs:element name="device" minOccurs="0" maxOccurs="64">
                    <xs:complexType>
                      <xs:attribute name="host" type="p:host" use="required"/>
                      <xs:attribute name="port" type="p:port"/>
                      <xs:attribute name="name" type="p:text"/>
                    </xs:complexType>
                  </xs:element>
                </xs:sequence>
                <xs:attribute name="inherit" type="xs:boolean"/>
              </xs:complexType>
            </xs:element>
            <xs:element name="logging" minOccurs="0">
              <xs:complexType>
                <xs:sequence>
                  <xs:element name="category" minOccurs="0" maxOccurs="256">
                    <xs:complexType>
                      <xs:attribute name="pattern" type="p:categoryPattern" use="required"/>
                      <xs:attribute name="level" type="p:categoryLevel" use="required"/>
                    </xs:complexType>
                  </xs:element>
                  <xs:element name="message" minOccurs="0" maxOccurs="64">
                    <xs:complexType>
                      <xs:attribute name="pattern" type="p:regularExpression" use="required"/>
                      <xs:attribute name="caseInsensitive" type="xs:boolean"/>
                    </xs:complexType>
                  </xs:element>
                </xs:sequence>
                <xs:attribute name="level" type="p:minimumLevel"/>
                <xs:attribute name="inherit" type="xs:boolean"/>
              </xs:complexType>
            </xs:element>
            <xs:element name="style" minOccurs="0">
              <xs:complexType>
                <xs:attribute name="path" type="p:path" use="required"/>
              </xs:complexType>
            </xs:element>
            <xs:element name="daemon" minOccurs="0">
              <xs:complexType>
                <xs:sequence>
                  <xs:element name="token" minOccurs="0" maxOccurs="64">
                    <xs:complexType>
                      <xs:attribute name="hash" type="p:tokenHash" use="required"/>
                    </xs:complexType>
                  </xs:element>
                  <xs:element name="mediaFolder" minOccurs="0" maxOccurs="64">
                    <xs:complexType>
                      <xs:attribute name="path" type="p:path" use="required"/>
                    </xs:complexType>
                  </xs:element>
                  <xs:element name="allowedOrigin" minOccurs="0" maxOccurs="64">
                    <xs:complexType>
                      <xs:attribute name="origin" type="p:webOrigin" use="required"/>
                    </xs:complexType>
                  </xs:element>
                </xs:sequence>
                <xs:attribute name="listen" type="p:listenAddress"/>
                <xs:attribute name="requestsPerSecond" type="p:requestRate"/>
                <xs:attribute name="burst" type="xs:positiveInteger"/>
                <xs:attribute name="maximumBodySize" type="xs:positiveInteger"/>
                <xs:attribute name="broker" type="p:brokerURL"/>
                <xs:attribute name="site" type="p:topicLevel"/>
                <xs:attribute name="topicPrefix" type="p:topicLevel"/>
                <xs:attribute name="brokerUsername" type="p:brokerUsername"/>
                <xs:attribute name="brokerPasswordFile" type="p:path"/>
                <xs:attribute name="brokerCAFile" type="p:path"/>
                <xs:attribute name="homeAssistant" type="xs:boolean"/>
                <xs:attribute name="discoveryPrefix" type="p:topicLevel"/>
                <xs:attribute name="inherit" type="xs:boolean"/>
              </xs:complexType>
            </xs:element>
          </xs:all>
          <xs:attribute name="extends" type="p:path"/>
        </xs:complexType>
      </xs:element>
    </xs:schema>
    """#
